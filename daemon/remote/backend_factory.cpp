#include <daemon/remote/backend_factory.hpp>

#include <daemon/remote/http/http_backend.hpp>
#include <daemon/remote/http/http_settings.hpp>
#include <daemon/remote/redis/redis_backend.hpp>
#include <daemon/remote/redis/redis_settings.hpp>

namespace jitcache::daemon::remote {

common::Result<std::unique_ptr<RemoteBackend>> make_backend(const std::string& url,
                                                            const BackendCredentials& credentials) {
  if (url.rfind("redis://", 0) == 0 || url.rfind("redis+cluster://", 0) == 0) {
    auto settings = parse_redis_url(url);
    JITCACHE_TRY(settings);
    settings->password = credentials.password;
    return std::unique_ptr<RemoteBackend>(make_redis_backend(std::move(*settings)));
  }
  if (url.rfind("http://", 0) == 0 || url.rfind("https://", 0) == 0) {
    auto settings = http::parse_http_url(url);
    JITCACHE_TRY(settings);
    if (!credentials.password.empty()) {
      auto set = http::set_http_credentials(*settings, credentials.password);
      JITCACHE_TRY(set);
    }
    settings->ca_file = credentials.ca_file;
    return http::make_http_backend(std::move(*settings));
  }
  return common::make_error(common::ErrorCode::invalid_argument,
                            "not a remote URL: redis://, redis+cluster://, http:// or https:// expected");
}

}  // namespace jitcache::daemon::remote
