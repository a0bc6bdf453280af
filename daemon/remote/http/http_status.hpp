// What an HTTP status the backend did not expect means for the tier (remote_backend.hpp
// "Errors"): 401 and 403 forbidden (the credentials, or a read-only location refusing a write),
// 5xx io (the server's own failure), anything else io with the status in the message (a redirect,
// which is not followed; a 409 from a WebDAV server that will not create the folders of a path;
// nginx without create_full_put_path answers 500 instead).
// Thread safety: a free function.
#pragma once

#include <string>

#include <common/result.hpp>

namespace jitcache::daemon::remote::http {

// `what` names the request: "PUT https://cache/jc/img/ab12".
common::Error error_for_status(unsigned status, const std::string& what);

}  // namespace jitcache::daemon::remote::http
