// Makes the backend a remote URL names (docs/operations.md "A fleet"): redis:// and
// redis+cluster:// (daemon/remote/redis/), http:// and https:// (daemon/remote/http/).
// Thread safety: pure function.
#pragma once

#include <memory>
#include <string>

#include <common/result.hpp>
#include <daemon/remote/backend/remote_backend.hpp>

namespace jitcache::daemon::remote {

struct BackendCredentials {
  std::string password;  // Redis AUTH; HTTP basic auth as "user:password"; empty: none
  std::string ca_file;   // https: extra CA certificates; empty: the system's only
};

common::Result<std::unique_ptr<RemoteBackend>> make_backend(const std::string& url,
                                                            const BackendCredentials& credentials);

}  // namespace jitcache::daemon::remote
