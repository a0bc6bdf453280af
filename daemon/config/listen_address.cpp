#include <daemon/config/listen_address.hpp>

#include <sys/un.h>

#include <charconv>

#include <boost/asio/ip/address.hpp>

namespace jitcache::daemon::config {

using common::ErrorCode;
using common::make_error;

namespace {

// sun_path's size on Linux, less the terminating NUL.
constexpr std::size_t k_max_unix_path_length = sizeof(sockaddr_un::sun_path) - 1;

common::Result<ListenAddress> parse_unix_address(std::string_view text, const std::string& quoted) {
  const std::string_view path = text.substr(k_unix_listen_prefix.size());
  if (path.empty() || path.front() != '/' || path.back() == '/') {
    return make_error(ErrorCode::invalid_argument,
                      quoted + ": a Unix socket needs an absolute file path, e.g. unix:/run/jitcache/metrics.sock");
  }
  if (path.size() > k_max_unix_path_length) {
    return make_error(ErrorCode::invalid_argument,
                      quoted + ": the socket path is longer than " + std::to_string(k_max_unix_path_length) + " bytes");
  }
  ListenAddress out;
  out.unix_path = std::string(path);
  return out;
}

}  // namespace

common::Result<ListenAddress> parse_listen_address(std::string_view text) {
  const std::string quoted = "\"" + std::string(text) + "\"";
  if (text.starts_with(k_unix_listen_prefix)) return parse_unix_address(text, quoted);
  const auto colon = text.rfind(':');
  if (colon == std::string_view::npos || colon == 0 || colon + 1 == text.size()) {
    return make_error(ErrorCode::invalid_argument,
                      quoted + " is not host:port (e.g. 127.0.0.1:9464 or [::1]:9464) or unix:PATH");
  }
  std::string_view host = text.substr(0, colon);
  const std::string_view port_text = text.substr(colon + 1);
  if (host.front() == '[') {
    if (host.back() != ']') return make_error(ErrorCode::invalid_argument, quoted + ": unbalanced [ ] around the host");
    host = host.substr(1, host.size() - 2);
  }
  unsigned port = 0;
  auto [end, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (ec != std::errc() || end != port_text.data() + port_text.size() || port > 65535) {
    return make_error(ErrorCode::invalid_argument, quoted + ": the port must be a number in 0..65535");
  }
  ListenAddress out;
  out.port = static_cast<std::uint16_t>(port);
  if (host == "localhost") {
    out.host = "127.0.0.1";
    return out;
  }
  boost::system::error_code parse_error;
  const auto address = boost::asio::ip::make_address(std::string(host), parse_error);
  if (parse_error) {
    return make_error(ErrorCode::invalid_argument,
                      quoted + ": \"" + std::string(host) + "\" is not an IP address (or localhost)");
  }
  if (!address.is_loopback()) {
    return make_error(ErrorCode::invalid_argument,
                      quoted +
                          " is not a loopback address: the metrics endpoint has no authentication, so it "
                          "listens on 127.0.0.0/8 or ::1 only (put an authenticating proxy in front to "
                          "scrape from elsewhere, or unix:PATH for a socket only a group can reach)");
  }
  out.host = address.to_string();
  return out;
}

}  // namespace jitcache::daemon::config
