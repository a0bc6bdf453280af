#include <daemon/remote/redis/redis_settings.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>

#include <charconv>
#include <string>
#include <utility>

namespace jitcache::daemon::remote {

namespace {

using common::ErrorCode;
using common::make_error;

constexpr std::string_view k_standalone_scheme = "redis";
constexpr std::string_view k_cluster_scheme = "redis+cluster";

common::Error invalid(std::string_view url, std::string_view why) {
  return make_error(ErrorCode::invalid_argument, "remote URL \"" + std::string(url) + "\": " + std::string(why));
}

bool is_alnum(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'); }

bool is_user_name(std::string_view user) {
  if (user.empty() || user.size() > 128) return false;
  for (const char c : user) {
    if (!is_alnum(c) && c != '.' && c != '_' && c != '-' && c != '+') return false;
  }
  return true;
}

bool is_host_name(std::string_view host) {
  if (host.empty() || host.size() > 253 || host.front() == '-' || host.front() == '.') return false;
  for (const char c : host) {
    if (!is_alnum(c) && c != '.' && c != '-' && c != '_') return false;
  }
  return true;
}

// 1..64 printable ASCII bytes, no space, no brace: a brace in the prefix would make it, not the
// id, the Cluster hash tag of every key.
bool is_key_prefix(std::string_view prefix) {
  if (prefix.empty() || prefix.size() > k_max_redis_key_prefix_length) return false;
  for (const char c : prefix) {
    if (c <= ' ' || c > '~' || c == '{' || c == '}') return false;
  }
  return true;
}

template <class Number>
bool parse_decimal(std::string_view text, Number& value) {
  if (text.empty() || text.size() > 10) return false;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  return error == std::errc() && end == text.data() + text.size();
}

common::Result<RedisNodeAddress> parse_host_port(std::string_view url, std::string_view text) {
  RedisNodeAddress address;
  std::string_view port_text;
  if (!text.empty() && text.front() == '[') {
    const auto close = text.find(']');
    if (close == std::string_view::npos) return invalid(url, "an IPv6 address opened with '[' is not closed with ']'");
    address.host = std::string(text.substr(1, close - 1));
    in6_addr parsed{};
    if (::inet_pton(AF_INET6, address.host.c_str(), &parsed) != 1) {
      return invalid(url, "\"" + address.host + "\" in brackets is not an IPv6 address");
    }
    const auto after = text.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':') return invalid(url, "after an IPv6 address in brackets only \":port\" may follow");
      port_text = after.substr(1);
      if (port_text.empty()) return invalid(url, "an empty port after ':'");
    }
  } else {
    const auto colon = text.find(':');
    if (colon != std::string_view::npos && text.find(':', colon + 1) != std::string_view::npos) {
      return invalid(url, "an IPv6 address must be written in brackets, as in redis://[::1]:6379");
    }
    address.host = std::string(text.substr(0, colon));
    if (!is_host_name(address.host)) {
      return invalid(url, address.host.empty() ? "no host" : "\"" + address.host + "\" is not a host name or address");
    }
    if (colon != std::string_view::npos) {
      port_text = text.substr(colon + 1);
      if (port_text.empty()) return invalid(url, "an empty port after ':'");
    }
  }
  if (!port_text.empty()) {
    unsigned port = 0;
    if (!parse_decimal(port_text, port) || port == 0 || port > 65535) {
      return invalid(url, "port \"" + std::string(port_text) + "\" is not a number in 1..65535");
    }
    address.port = static_cast<std::uint16_t>(port);
  }
  return address;
}

common::Result<void> parse_query(std::string_view url, std::string_view query, RedisSettings& settings) {
  bool prefix_seen = false;
  while (!query.empty()) {
    const auto amp = query.find('&');
    const auto item = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
    const auto equals = item.find('=');
    const auto name = item.substr(0, equals);
    if (name != "prefix") {
      return invalid(url, "unknown parameter \"" + std::string(name) + "\" (the only one is prefix=NAME)");
    }
    if (equals == std::string_view::npos) return invalid(url, "prefix needs a value: ?prefix=NAME");
    if (prefix_seen) return invalid(url, "prefix is given twice");
    prefix_seen = true;
    const auto value = item.substr(equals + 1);
    if (!is_key_prefix(value)) {
      return invalid(url, "the key prefix must be 1.." + std::to_string(k_max_redis_key_prefix_length) +
                              " printable ASCII characters without spaces or braces");
    }
    settings.key_prefix = std::string(value);
  }
  return {};
}

}  // namespace

std::string to_string(const RedisNodeAddress& address) {
  const bool v6 = address.host.find(':') != std::string::npos;
  return (v6 ? "[" + address.host + "]" : address.host) + ":" + std::to_string(address.port);
}

common::Result<RedisSettings> parse_redis_url(std::string_view url) {
  const auto separator = url.find("://");
  if (separator == std::string_view::npos) {
    return invalid(url, "expected redis://host:port or redis+cluster://host:port,host:port");
  }
  const auto scheme = url.substr(0, separator);
  RedisSettings settings;
  if (scheme == k_standalone_scheme) {
    settings.mode = RedisSettings::Mode::standalone;
  } else if (scheme == k_cluster_scheme) {
    settings.mode = RedisSettings::Mode::cluster;
  } else if (scheme == "rediss" || scheme == "rediss+cluster") {
    return make_error(ErrorCode::unsupported, "remote URL \"" + std::string(url) +
                                                  "\": TLS (rediss://) is not supported; reach Redis over a "
                                                  "trusted network or a TLS tunnel such as stunnel");
  } else {
    return invalid(url, "the scheme must be redis:// or redis+cluster://");
  }

  std::string_view rest = url.substr(separator + 3);
  if (rest.find('#') != std::string_view::npos) return invalid(url, "a URL fragment ('#') is not allowed");
  if (rest.find('%') != std::string_view::npos) return invalid(url, "percent-encoding is not supported");
  std::string_view query;
  if (const auto question = rest.find('?'); question != std::string_view::npos) {
    query = rest.substr(question + 1);
    rest = rest.substr(0, question);
  }
  std::string_view path;
  if (const auto slash = rest.find('/'); slash != std::string_view::npos) {
    path = rest.substr(slash + 1);
    rest = rest.substr(0, slash);
  }

  if (const auto at = rest.rfind('@'); at != std::string_view::npos) {
    const auto user_info = rest.substr(0, at);
    if (user_info.find(':') != std::string_view::npos) {
      return invalid(url,
                     "a password in the URL is not allowed (it would be logged and shown by STATS): "
                     "put it in the file remote_password_file names, and only the user in the URL");
    }
    if (!is_user_name(user_info)) {
      return invalid(url, "the user must be 1..128 letters, digits or . _ - +");
    }
    settings.user = std::string(user_info);
    rest = rest.substr(at + 1);
  }

  while (true) {
    const auto comma = rest.find(',');
    JITCACHE_TRY_ASSIGN(auto address, parse_host_port(url, rest.substr(0, comma)));
    settings.nodes.push_back(std::move(address));
    if (comma == std::string_view::npos) break;
    rest = rest.substr(comma + 1);
  }
  if (settings.mode == RedisSettings::Mode::standalone && settings.nodes.size() != 1) {
    return invalid(url, "redis:// names one server; for a Redis Cluster's seeds use redis+cluster://");
  }

  if (!path.empty()) {
    if (settings.mode == RedisSettings::Mode::cluster) {
      return invalid(url, "a Redis Cluster has only database 0: no /db in redis+cluster://");
    }
    if (!parse_decimal(path, settings.db) || settings.db < 0) {
      return invalid(url, "the database \"/" + std::string(path) + "\" is not a number");
    }
  }
  JITCACHE_TRY(parse_query(url, query, settings));
  return settings;
}

std::string redis_url_name(const RedisSettings& settings) {
  const bool cluster = settings.mode == RedisSettings::Mode::cluster;
  std::string name = std::string(cluster ? k_cluster_scheme : k_standalone_scheme) + "://";
  if (!settings.user.empty()) name += settings.user + "@";
  for (std::size_t i = 0; i < settings.nodes.size(); ++i) name += (i == 0 ? "" : ",") + to_string(settings.nodes[i]);
  if (!cluster) name += "/" + std::to_string(settings.db);
  if (settings.key_prefix != k_default_redis_key_prefix) name += "?prefix=" + settings.key_prefix;
  return name;
}

}  // namespace jitcache::daemon::remote
