#include <tests/support/garbage_server.hpp>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string_view>
#include <vector>

namespace jitcache::testing {

namespace {

constexpr std::string_view k_not_resp =
    "HTTP/1.1 400 Bad Request\r\nContent-Type: text/html\r\n\r\n<html>this is not Redis</html>\r\n";

void send_all(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t sent = ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (sent < 0 && errno == EINTR) continue;
    if (sent <= 0) return;  // the client went away: nothing more to say to it
    bytes.remove_prefix(static_cast<std::size_t>(sent));
  }
}

}  // namespace

GarbageServer::GarbageServer(Behaviour behaviour, std::vector<std::string> script, std::uint16_t port)
    : m_behaviour(behaviour), m_script(std::move(script)) {
  m_listener = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(port);
  socklen_t length = sizeof(address);
  // Rationale: a server killed by the test closed its end of every connection first, so those
  // connections sit in TIME_WAIT on its port; without SO_REUSEADDR the port stays taken a minute.
  const int reuse = 1;
  if (m_listener >= 0) ::setsockopt(m_listener, SOL_SOCKET, SO_REUSEADDR, &reuse, sizeof(reuse));
  if (m_listener < 0 || ::bind(m_listener, reinterpret_cast<const sockaddr*>(&address), sizeof(address)) != 0 ||
      ::listen(m_listener, 64) != 0 || ::getsockname(m_listener, reinterpret_cast<sockaddr*>(&address), &length) != 0 ||
      ::pipe2(m_wake, O_CLOEXEC) != 0) {
    const std::string reason = std::strerror(errno);
    if (m_listener >= 0) ::close(m_listener);
    throw std::runtime_error("GarbageServer: cannot listen on 127.0.0.1:" + std::to_string(port) + ": " + reason);
  }
  m_port = ntohs(address.sin_port);
  for (auto& reply : m_script) {
    for (auto at = reply.find("{port}"); at != std::string::npos; at = reply.find("{port}", at)) {
      reply.replace(at, 6, std::to_string(m_port));
    }
  }
  m_thread = std::thread([this] { serve(); });
}

GarbageServer::~GarbageServer() {
  const char stop = 1;
  [[maybe_unused]] const auto written = ::write(m_wake[1], &stop, 1);
  m_thread.join();
  ::close(m_wake[0]);
  ::close(m_wake[1]);
  ::close(m_listener);
}

void GarbageServer::serve() {
  struct Client {
    int fd;
    std::size_t reads;
  };
  std::vector<Client> clients;
  for (;;) {
    std::vector<pollfd> polled{{m_wake[0], POLLIN, 0}, {m_listener, POLLIN, 0}};
    for (const auto& client : clients) polled.push_back({client.fd, POLLIN, 0});
    if (::poll(polled.data(), polled.size(), -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (polled[0].revents != 0) break;
    if ((polled[1].revents & POLLIN) != 0) {
      const int fd = ::accept4(m_listener, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd >= 0) {
        ++m_connections;
        // Rationale: a client that stops reading must not hold this thread (and the destructor)
        // in send() for ever.
        const timeval send_timeout{2, 0};
        ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &send_timeout, sizeof(send_timeout));
        if (m_behaviour == Behaviour::close) {
          ::close(fd);
        } else {
          clients.push_back({fd, 0});
        }
      }
    }
    std::vector<Client> open;
    for (std::size_t i = 0; i < clients.size(); ++i) {
      Client client = clients[i];
      if (polled[i + 2].revents != 0) {
        char buffer[65536];
        const ssize_t got = ::recv(client.fd, buffer, sizeof(buffer), 0);
        if (got <= 0 && !(got < 0 && errno == EINTR)) {
          ::close(client.fd);
          continue;
        }
        if (got > 0) m_received += static_cast<std::size_t>(got);
        if (m_behaviour == Behaviour::non_resp) send_all(client.fd, k_not_resp);
        if (m_behaviour == Behaviour::scripted && !m_script.empty()) {
          send_all(client.fd, m_script[std::min(client.reads, m_script.size() - 1)]);
        }
        ++client.reads;
      }
      open.push_back(client);
    }
    clients = std::move(open);
  }
  for (const auto& client : clients) ::close(client.fd);
}

}  // namespace jitcache::testing
