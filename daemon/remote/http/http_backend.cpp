#include <daemon/remote/http/http_backend.hpp>

#include <openssl/evp.h>

#include <cctype>
#include <exception>
#include <string>
#include <utility>

#include <boost/asio/ssl/context.hpp>

#include <daemon/remote/http/connection_pool.hpp>
#include <daemon/remote/http/http_connection.hpp>
#include <daemon/remote/http/http_exchange.hpp>
#include <daemon/remote/http/http_status.hpp>
#include <daemon/remote/http/tls_client_context.hpp>

namespace jitcache::daemon::remote::http {

namespace {

namespace bhttp = boost::beast::http;
using common::ErrorCode;
using common::make_error;

// The id of the probe space that ping asks about; whether it exists does not matter.
constexpr char k_ping_id[] = "ping";

std::string base64(std::string_view bytes) {
  std::string text(4 * ((bytes.size() + 2) / 3) + 1, '\0');
  const int length =
      EVP_EncodeBlock(reinterpret_cast<unsigned char*>(text.data()),
                      reinterpret_cast<const unsigned char*>(bytes.data()), static_cast<int>(bytes.size()));
  text.resize(static_cast<std::size_t>(length));
  return text;
}

std::string authorization_for(const HttpSettings& settings) {
  if (!settings.user.empty()) return "Basic " + base64(settings.user + ":" + settings.password);
  if (!settings.bearer_token.empty()) return "Bearer " + settings.bearer_token;
  return "";
}

std::string host_header_for(const HttpSettings& settings) {
  std::string host = settings.host.find(':') != std::string::npos ? "[" + settings.host + "]" : settings.host;
  if (settings.port != (settings.tls ? 443 : 80)) host += ":" + std::to_string(settings.port);
  return host;
}

// A key's space and id become path segments: they are checked here so that no key can name a path
// outside its space ("..") or need escaping (remote_backend.hpp: lower-case hex, or [A-Za-z0-9._-]).
common::Result<void> check_key(RemoteKey key) {
  const auto is_id_char = [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '.' || c == '_' || c == '-';
  };
  bool valid = !key.space.empty() && !key.id.empty() && key.id != "." && key.id != ".." && key.id.size() <= 200;
  for (const char c : key.space) valid = valid && std::islower(static_cast<unsigned char>(c)) != 0;
  for (const char c : key.id) valid = valid && is_id_char(c);
  if (!valid) {
    return make_error(ErrorCode::invalid_argument,
                      "not a remote key: space \"" + std::string(key.space) + "\", id \"" + std::string(key.id) + "\"");
  }
  return {};
}

HttpRequest make_request(bhttp::verb method, std::string target) {
  HttpRequest request;
  request.method = method;
  request.target = std::move(target);
  return request;
}

template <class Call>
auto guarded(Call&& call) -> decltype(call()) {
  try {
    return call();
  } catch (const std::exception& error) {
    return make_error(ErrorCode::internal, std::string("HTTP remote: ") + error.what());
  }
}

class HttpBackend final : public RemoteBackend {
 public:
  HttpBackend(HttpSettings settings, std::shared_ptr<boost::asio::ssl::context> tls)
      : m_settings(std::move(settings)),
        m_name(display_url(m_settings)),
        m_host_header(host_header_for(m_settings)),
        m_authorization(authorization_for(m_settings)),
        m_tls(std::move(tls)),
        m_pool(m_settings.max_connections, m_settings.idle_limit) {}

  std::string name() const override { return m_name; }

  common::Result<std::optional<std::string>> get(RemoteKey key, std::size_t max_bytes, Deadline deadline) override {
    return guarded([&]() -> common::Result<std::optional<std::string>> {
      JITCACHE_TRY(check_key(key));
      HttpRequest request = make_request(bhttp::verb::get, target(key));
      request.wants_body = true;
      request.max_body = max_bytes;
      JITCACHE_TRY_ASSIGN(auto response, exchange(request, deadline));
      if (response.status == 200) return std::optional<std::string>(std::move(response.body));
      if (response.status == 404) return std::optional<std::string>();
      return error_for_status(response.status, describe(request));
    });
  }

  common::Result<bool> exists(RemoteKey key, Deadline deadline) override {
    return guarded([&]() -> common::Result<bool> {
      JITCACHE_TRY(check_key(key));
      const HttpRequest request = make_request(bhttp::verb::head, target(key));
      JITCACHE_TRY_ASSIGN(const auto response, exchange(request, deadline));
      if (response.status / 100 == 2) return true;
      if (response.status == 404) return false;
      return error_for_status(response.status, describe(request));
    });
  }

  common::Result<void> put(RemoteKey key, std::string_view value, std::chrono::milliseconds /*ttl: no expiry in HTTP*/,
                           Deadline deadline) override {
    return guarded([&]() -> common::Result<void> {
      JITCACHE_TRY(check_key(key));
      HttpRequest request = make_request(bhttp::verb::put, target(key));
      request.body = value;
      JITCACHE_TRY_ASSIGN(const auto response, exchange(request, deadline));
      if (response.status / 100 == 2) return {};
      return error_for_status(response.status, describe(request));
    });
  }

  common::Result<bool> put_if_absent(RemoteKey key, std::string_view value, std::chrono::milliseconds /*ttl*/,
                                     Deadline deadline) override {
    return guarded([&]() -> common::Result<bool> {
      JITCACHE_TRY(check_key(key));
      if (!m_settings.leases) {
        return make_error(ErrorCode::unsupported,
                          m_name +
                              ": no leases on this HTTP remote (add ?lease=if-none-match to the URL only for a server "
                              "that honours If-None-Match: * on PUT; nginx's dav module does not)");
      }
      HttpRequest request = make_request(bhttp::verb::put, target(key));
      request.body = value;
      request.if_none_match = true;
      JITCACHE_TRY_ASSIGN(const auto response, exchange(request, deadline));
      if (response.status / 100 == 2) return true;
      if (response.status == 412) return false;
      return error_for_status(response.status, describe(request));
    });
  }

  common::Result<void> remove(RemoteKey key, Deadline deadline) override {
    return guarded([&]() -> common::Result<void> {
      JITCACHE_TRY(check_key(key));
      const HttpRequest request = make_request(bhttp::verb::delete_, target(key));
      JITCACHE_TRY_ASSIGN(const auto response, exchange(request, deadline));
      if (response.status / 100 == 2 || response.status == 404) return {};
      return error_for_status(response.status, describe(request));
    });
  }

  common::Result<void> ping(Deadline deadline) override {
    return guarded([&]() -> common::Result<void> {
      const HttpRequest request = make_request(bhttp::verb::head, target(RemoteKey{"probe", k_ping_id}));
      JITCACHE_TRY_ASSIGN(const auto response, exchange(request, deadline));
      if (response.status / 100 == 2 || response.status == 404 || response.status == 405) return {};
      return error_for_status(response.status, describe(request));
    });
  }

 private:
  std::string target(RemoteKey key) const {
    std::string path = m_settings.prefix;
    path.append("/").append(key.space).append("/").append(key.id);
    return path;
  }

  std::string describe(const HttpRequest& request) const {
    return std::string(bhttp::to_string(request.method)) + " " + (m_settings.tls ? "https://" : "http://") +
           m_host_header + request.target;
  }

  // One request on a pooled connection. A kept-alive connection the server closed while it was idle
  // fails before any answer: the request goes once more, on a new connection (every request here is
  // idempotent, and a lease's PUT sent twice answers 412 the second time at worst, which the tier
  // takes as someone else's lease: the safe side).
  common::Result<HttpResponse> exchange(const HttpRequest& request, Deadline deadline) {
    auto response = exchange_on_pool(request, deadline);
    if (response) return response;
    auto error = std::move(response).error();
    error.message = m_name + ": " + error.message;
    return error;
  }

  common::Result<HttpResponse> exchange_on_pool(const HttpRequest& request, Deadline deadline) {
    if (Clock::now() >= deadline) {
      return make_error(ErrorCode::timeout, describe(request) + ": the deadline had passed before the call");
    }
    for (int attempt = 0;; ++attempt) {
      JITCACHE_TRY_ASSIGN(auto slot, m_pool.acquire(deadline));
      if (attempt > 0) slot.discard();  // the retry goes on a new connection, not another idle one
      const bool reused = slot.connection() != nullptr;
      if (!reused) {
        JITCACHE_TRY_ASSIGN(slot.connection(), HttpConnection::open(m_settings, m_tls.get(), deadline));
      }
      auto response = slot.connection()->exchange(request, m_host_header, m_authorization, deadline);
      if (!response && reused && slot.connection()->closed_before_answering()) continue;
      return response;
    }
  }

  const HttpSettings m_settings;
  const std::string m_name;
  const std::string m_host_header;
  const std::string m_authorization;
  const std::shared_ptr<boost::asio::ssl::context> m_tls;
  ConnectionPool m_pool;
};

}  // namespace

common::Result<std::unique_ptr<RemoteBackend>> make_http_backend(HttpSettings settings) {
  try {
    std::shared_ptr<boost::asio::ssl::context> tls;
    if (settings.tls) {
      JITCACHE_TRY_ASSIGN(tls, make_tls_client_context(settings.ca_file));
    }
    return std::unique_ptr<RemoteBackend>(std::make_unique<HttpBackend>(std::move(settings), std::move(tls)));
  } catch (const std::exception& error) {
    return make_error(ErrorCode::internal, std::string("cannot set up the HTTP remote: ") + error.what());
  }
}

}  // namespace jitcache::daemon::remote::http
