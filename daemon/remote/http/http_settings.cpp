#include <daemon/remote/http/http_settings.hpp>

#include <arpa/inet.h>

#include <cctype>
#include <charconv>

namespace jitcache::daemon::remote::http {

namespace {

using common::ErrorCode;
using common::make_error;

common::Error bad_url(std::string_view url, const std::string& why) {
  return make_error(ErrorCode::invalid_argument, "remote URL \"" + std::string(url) + "\": " + why);
}

bool is_name_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '-' || c == '.' || c == '_';
}

// RFC 3986 pchar without '%' escapes decoded: unreserved, sub-delims, ':' and '@'. A '%' must start
// a valid escape.
bool is_path_char(char c) {
  if (std::isalnum(static_cast<unsigned char>(c)) != 0) return true;
  return std::string_view("-._~!$&'()*+,;=:@%").find(c) != std::string_view::npos;
}

bool is_hex(char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; }

common::Result<std::string> parse_prefix(std::string_view url, std::string_view path) {
  while (!path.empty() && path.back() == '/') path.remove_suffix(1);
  if (path.empty()) return std::string();
  std::size_t start = 1;  // path[0] is '/'
  while (start <= path.size()) {
    auto end = path.find('/', start);
    if (end == std::string_view::npos) end = path.size();
    const std::string_view segment = path.substr(start, end - start);
    if (segment.empty()) return bad_url(url, "the path has an empty segment (\"//\")");
    if (segment == "." || segment == "..") return bad_url(url, "the path has a \".\" or \"..\" segment");
    for (std::size_t i = 0; i < segment.size(); ++i) {
      const char c = segment[i];
      if (!is_path_char(c)) {
        return bad_url(url, std::string("the path has a character that must be percent-encoded (code ") +
                                std::to_string(static_cast<unsigned char>(c)) + ")");
      }
      if (c == '%' && (i + 2 >= segment.size() || !is_hex(segment[i + 1]) || !is_hex(segment[i + 2]))) {
        return bad_url(url, "the path has a '%' that starts no %XX escape");
      }
    }
    start = end + 1;
  }
  return std::string(path);
}

common::Result<void> parse_host_port(std::string_view url, std::string_view authority, HttpSettings& settings) {
  std::string_view port_text;
  if (!authority.empty() && authority.front() == '[') {
    const auto close = authority.find(']');
    if (close == std::string_view::npos) return bad_url(url, "an IPv6 address lacks its closing ']'");
    settings.host = std::string(authority.substr(1, close - 1));
    in6_addr address{};
    if (::inet_pton(AF_INET6, settings.host.c_str(), &address) != 1) {
      return bad_url(url, "\"" + settings.host + "\" is not an IPv6 address (zone ids are not supported)");
    }
    const std::string_view rest = authority.substr(close + 1);
    if (!rest.empty()) {
      if (rest.front() != ':') return bad_url(url, "unexpected text after the IPv6 address");
      port_text = rest.substr(1);
      if (port_text.empty()) return bad_url(url, "':' without a port");
    }
  } else {
    const auto colon = authority.find(':');
    settings.host = std::string(authority.substr(0, colon));
    if (colon != std::string_view::npos) {
      port_text = authority.substr(colon + 1);
      if (port_text.empty()) return bad_url(url, "':' without a port");
    }
    if (settings.host.empty()) return bad_url(url, "no host");
    for (const char c : settings.host) {
      if (!is_name_char(c))
        return bad_url(url, "the host \"" + settings.host + "\" has a character not allowed in a host name");
    }
  }
  settings.port = settings.tls ? 443 : 80;
  if (!port_text.empty()) {
    unsigned value = 0;
    const auto [end, error] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), value);
    if (error != std::errc() || end != port_text.data() + port_text.size() || value == 0 || value > 65535) {
      return bad_url(url, "the port \"" + std::string(port_text) + "\" is not a number from 1 to 65535");
    }
    settings.port = static_cast<std::uint16_t>(value);
  }
  return {};
}

}  // namespace

common::Result<HttpSettings> parse_http_url(std::string_view url) {
  HttpSettings settings;
  std::string_view rest = url;
  const auto scheme_end = rest.find("://");
  if (scheme_end == std::string_view::npos) return bad_url(url, "not an http:// or https:// URL");
  std::string scheme(rest.substr(0, scheme_end));
  for (auto& c : scheme) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (scheme == "https") {
    settings.tls = true;
  } else if (scheme != "http") {
    return bad_url(url, "the scheme \"" + scheme + "\" is neither http nor https");
  }
  rest.remove_prefix(scheme_end + 3);
  if (rest.find('#') != std::string_view::npos) return bad_url(url, "a fragment ('#') has no meaning here");

  std::string_view query;
  if (const auto question = rest.find('?'); question != std::string_view::npos) {
    query = rest.substr(question + 1);
    rest = rest.substr(0, question);
  }
  const auto path_start = rest.find('/');
  const std::string_view authority = rest.substr(0, path_start);
  const std::string_view path = path_start == std::string_view::npos ? std::string_view() : rest.substr(path_start);
  if (authority.find('@') != std::string_view::npos) {
    return bad_url(url,
                   "credentials do not go in the URL (it is logged and shown): put \"user:password\" in the "
                   "file named by remote_password_file");
  }
  if (authority.empty()) return bad_url(url, "no host");
  JITCACHE_TRY(parse_host_port(url, authority, settings));
  JITCACHE_TRY_ASSIGN(settings.prefix, parse_prefix(url, path));

  if (!query.empty()) {
    if (query != "lease=if-none-match") {
      return bad_url(url, "the query \"" + std::string(query) +
                              "\" is not understood (the one query is ?lease=if-none-match, for a server that "
                              "honours If-None-Match: * on PUT)");
    }
    settings.leases = true;
  }
  return settings;
}

common::Result<void> set_http_credentials(HttpSettings& settings, std::string_view content) {
  while (!content.empty() && (content.back() == '\n' || content.back() == '\r')) content.remove_suffix(1);
  if (content.empty()) return make_error(ErrorCode::invalid_argument, "the remote password file is empty");
  for (const char c : content) {
    if (std::iscntrl(static_cast<unsigned char>(c)) != 0) {
      return make_error(ErrorCode::invalid_argument,
                        "the remote password file has a control character (a line break?) inside its one line");
    }
  }
  settings.user.clear();
  settings.password.clear();
  settings.bearer_token.clear();
  const auto colon = content.find(':');
  if (colon == std::string_view::npos) {
    settings.bearer_token = std::string(content);
    return {};
  }
  if (colon == 0 || colon + 1 == content.size()) {
    return make_error(ErrorCode::invalid_argument,
                      "the remote password file's \"user:password\" has an empty user or password");
  }
  settings.user = std::string(content.substr(0, colon));
  settings.password = std::string(content.substr(colon + 1));
  return {};
}

std::string display_url(const HttpSettings& settings) {
  std::string url = settings.tls ? "https://" : "http://";
  url += settings.host.find(':') != std::string::npos ? "[" + settings.host + "]" : settings.host;
  if (settings.port != (settings.tls ? 443 : 80)) url += ":" + std::to_string(settings.port);
  url += settings.prefix;
  if (settings.leases) url += "?lease=if-none-match";
  return url;
}

}  // namespace jitcache::daemon::remote::http
