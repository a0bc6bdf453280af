// A deliberately plain HTTP/1.1 client for the metrics endpoint's tests: one request over a fresh
// TCP connection to 127.0.0.1 (or a Unix socket), the whole reply read until the server closes, split into status,
// headers and body. Not a general client (no chunked bodies, no redirects). Header-only so the
// integration tests need no new library. Thread safety: free functions.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include <cctype>
#include <cstdint>
#include <optional>
#include <string>

namespace jitcache::testing {

struct HttpReply {
  int status = 0;
  std::string headers;  // the header lines as received, lower-cased
  std::string body;
};

// Sends the request on a connected socket, then reads the reply until the server closes; closes
// `fd`. nullopt: no complete reply within 5 s.
inline std::optional<HttpReply> http_exchange(int fd, const std::string& raw_request) {
  timeval timeout{5, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof timeout);
  std::size_t sent = 0;
  while (sent < raw_request.size()) {
    const ssize_t n = ::send(fd, raw_request.data() + sent, raw_request.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) break;
    sent += static_cast<std::size_t>(n);
  }
  ::shutdown(fd, SHUT_WR);  // the whole request is sent: the server sees its end at once
  std::string raw;
  char buffer[16384];
  for (;;) {
    const ssize_t n = ::recv(fd, buffer, sizeof buffer, 0);
    if (n <= 0) break;
    raw.append(buffer, static_cast<std::size_t>(n));
  }
  ::close(fd);
  const auto end_of_headers = raw.find("\r\n\r\n");
  if (raw.rfind("HTTP/1.", 0) != 0 || end_of_headers == std::string::npos) return std::nullopt;
  HttpReply reply;
  reply.status = std::stoi(raw.substr(9, 3));
  reply.headers = raw.substr(0, end_of_headers);
  for (auto& c : reply.headers) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  reply.body = raw.substr(end_of_headers + 4);
  return reply;
}

// A TCP connection to 127.0.0.1:port; -1 when refused.
inline int connect_loopback(std::uint16_t port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(port);
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// A connection to a Unix stream socket; -1 when refused or absent.
inline int connect_unix(const std::string& path) {
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  if (path.size() >= sizeof(address.sun_path)) {
    ::close(fd);
    return -1;
  }
  path.copy(address.sun_path, path.size());
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// nullopt: no connection (refused), or no complete reply within 5 s.
inline std::optional<HttpReply> http_request(std::uint16_t port, const std::string& raw_request) {
  const int fd = connect_loopback(port);
  if (fd < 0) return std::nullopt;
  return http_exchange(fd, raw_request);
}

inline std::optional<HttpReply> http_request_unix(const std::string& path, const std::string& raw_request) {
  const int fd = connect_unix(path);
  if (fd < 0) return std::nullopt;
  return http_exchange(fd, raw_request);
}

inline std::optional<HttpReply> http_get(std::uint16_t port, const std::string& path) {
  return http_request(port, "GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
}

inline std::optional<HttpReply> http_get_unix(const std::string& path, const std::string& target) {
  return http_request_unix(path, "GET " + target + " HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n");
}

}  // namespace jitcache::testing
