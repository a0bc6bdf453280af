// The HTTP remote: a RemoteBackend (daemon/remote/backend/remote_backend.hpp) on a cache server
// that stores a file per key, reached by GET, HEAD, PUT and DELETE on <url prefix>/<space>/<id>
// (docs/remote-layout.md "HTTP": what each call sends, which answers mean what, what a server
// must support, and a sample nginx configuration).
//
// Thread safety: the backend's methods may be called from any number of threads at once; they
// share a bounded pool of kept-alive connections (connection_pool.hpp).
#pragma once

#include <memory>

#include <common/result.hpp>
#include <daemon/remote/backend/remote_backend.hpp>
#include <daemon/remote/http/http_settings.hpp>

namespace jitcache::daemon::remote::http {

// A backend for `settings` (parse_http_url, set_http_credentials). Connects lazily: a server that
// is down makes the calls fail, not this. invalid_argument when the https settings cannot be
// used (the CA file is unreadable or holds no certificate).
common::Result<std::unique_ptr<RemoteBackend>> make_http_backend(HttpSettings settings);

}  // namespace jitcache::daemon::remote::http
