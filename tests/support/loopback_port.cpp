#include <tests/support/loopback_port.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>

namespace jitcache::testing {

namespace {

// Binds 127.0.0.1:port (0: any) and returns the port bound, or 0 with errno set.
std::uint16_t bind_loopback(std::uint16_t port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return 0;
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(port);
  socklen_t length = sizeof(address);
  const bool bound = ::bind(fd, reinterpret_cast<const sockaddr*>(&address), sizeof(address)) == 0 &&
                     ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) == 0;
  const int error = errno;
  ::close(fd);
  errno = error;
  return bound ? ntohs(address.sin_port) : 0;
}

}  // namespace

std::uint16_t free_loopback_port() {
  const auto port = bind_loopback(0);
  if (port == 0) throw std::runtime_error(std::string("free_loopback_port: bind: ") + std::strerror(errno));
  return port;
}

bool loopback_port_is_free(std::uint16_t port) { return bind_loopback(port) == port; }

std::uint16_t free_loopback_port_with(std::uint16_t offset) {
  // Rationale: the kernel picks from the ephemeral range (32768-60999 on Linux by default), where
  // a port of every few is low enough for the offset; 200 tries find one.
  for (int attempt = 0; attempt < 200; ++attempt) {
    const auto port = free_loopback_port();
    if (port + offset <= 65535 && loopback_port_is_free(static_cast<std::uint16_t>(port + offset))) return port;
  }
  throw std::runtime_error("free_loopback_port_with: no free port P with P + " + std::to_string(offset) + " free");
}

}  // namespace jitcache::testing
