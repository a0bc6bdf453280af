// HttpSettings: where an HTTP cache server is and how to talk to it, from the `remote` URL of the
// configuration (docs/remote-layout.md "HTTP"), the password file and the CA file settings.
//
//   http://host[:port][/prefix][?lease=if-none-match]
//   https://host[:port][/prefix][?lease=if-none-match]
//
// host is a DNS name, an IPv4 address or an IPv6 address in brackets ("[fd00::5]"); the port
// defaults to 80 / 443; the prefix is a path ("/jitcache/v1") under which every key lives, empty
// for the server's root. `?lease=if-none-match` says that the server honours `If-None-Match: *` on
// PUT, which turns on put_if_absent (remote_backend.hpp). Credentials never come in the URL (it
// is logged and shown by `jitcache remote check`): a URL with `user:pass@` is refused and the
// password file holds them (set_http_credentials).
//
// Thread safety: plain values and free functions.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include <common/result.hpp>

namespace jitcache::daemon::remote::http {

struct HttpSettings {
  bool tls = false;  // https
  std::string host;  // as in the URL, without the brackets of an IPv6 address
  std::uint16_t port = 0;
  std::string prefix;   // "" or "/a/b": starts with '/', no '/' at the end
  bool leases = false;  // ?lease=if-none-match: put_if_absent sends If-None-Match: *

  // Basic authentication when user is set; a bearer token (Authorization: Bearer) when
  // bearer_token is set; neither: no Authorization header. set_http_credentials fills them.
  std::string user;
  std::string password;
  std::string bearer_token;

  // https: the PEM file of the certificate authorities to trust instead of the system's store
  // (OpenSSL's default paths, /etc/ssl/certs on Debian); empty: the system's store. The server's
  // certificate is always verified, and its name checked against host.
  std::string ca_file;

  // At most this many connections to the server at once, kept alive between calls; a call finding
  // all in use waits for one until its deadline.
  std::size_t max_connections = 4;
  // A kept-alive connection idle longer than this is closed rather than reused: servers close idle
  // connections themselves (nginx after keepalive_timeout, 75 s by default), and a request sent on
  // one they are closing is lost.
  std::chrono::milliseconds idle_limit{30'000};
};

// Parses the remote URL. invalid_argument, with a message that names the problem, for another
// scheme, a missing or malformed host, a port out of range, userinfo, a fragment, a query other than
// lease=if-none-match, or a prefix with characters outside RFC 3986's path characters or with "."
// or ".." segments.
common::Result<HttpSettings> parse_http_url(std::string_view url);

// Takes the credentials from the content of the password file (remote_password_file), its
// trailing newline ignored:
//   user:password   basic authentication (the user may not contain ':'; the password may)
//   token           no ':' in it: a bearer token
// invalid_argument for an empty file, an empty user or password, or a control character (a line
// break inside would forge a header line).
common::Result<void> set_http_credentials(HttpSettings& settings, std::string_view password_file_content);

// The URL as logs, STATS and `jitcache remote check` show it: scheme, host, port when it is not the
// default, prefix, and ?lease=if-none-match when leases are on. Never a credential.
std::string display_url(const HttpSettings& settings);

}  // namespace jitcache::daemon::remote::http
