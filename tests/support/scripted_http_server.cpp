#include <tests/support/scripted_http_server.hpp>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <stdexcept>
#include <string_view>

namespace jitcache::testing {

namespace {

constexpr std::size_t k_header_limit = 64 * 1024;

// Waits for bytes on `fd` or for the stop pipe; appends what came. False: the peer closed, the
// socket failed, or the server stops.
bool read_more(int fd, int stop_fd, std::string& pending) {
  pollfd fds[2] = {{fd, POLLIN, 0}, {stop_fd, POLLIN, 0}};
  if (::poll(fds, 2, -1) <= 0 || (fds[1].revents & POLLIN) != 0) return false;
  char buffer[65536];
  const ssize_t n = ::recv(fd, buffer, sizeof buffer, 0);
  if (n <= 0) return false;
  pending.append(buffer, static_cast<std::size_t>(n));
  return true;
}

bool send_all(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (n <= 0) return false;
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

std::string lower(std::string_view text) {
  std::string result(text);
  for (auto& c : result) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return result;
}

struct Request {
  std::string method;
  std::string target;
  std::map<std::string, std::string> headers;  // names lower-cased
  std::string body;
};

// Parses the head of `pending` (up to the blank line); nullopt when it is not a request.
std::optional<Request> parse_head(std::string_view head) {
  Request request;
  const auto line_end = head.find("\r\n");
  const std::string_view start = head.substr(0, line_end);
  const auto first_space = start.find(' ');
  const auto second_space = start.find(' ', first_space + 1);
  if (first_space == std::string_view::npos || second_space == std::string_view::npos) return std::nullopt;
  request.method = std::string(start.substr(0, first_space));
  request.target = std::string(start.substr(first_space + 1, second_space - first_space - 1));
  std::size_t at = line_end + 2;
  while (at < head.size()) {
    auto end = head.find("\r\n", at);
    if (end == std::string_view::npos) end = head.size();
    const std::string_view line = head.substr(at, end - at);
    const auto colon = line.find(':');
    if (colon != std::string_view::npos) {
      std::string_view value = line.substr(colon + 1);
      while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
      request.headers[lower(line.substr(0, colon))] = std::string(value);
    }
    at = end + 2;
  }
  return request;
}

std::string response(int status, std::string_view reason, std::string_view body, bool head_only = false,
                     std::size_t content_length = 0) {
  std::string text = "HTTP/1.1 " + std::to_string(status) + " " + std::string(reason) + "\r\n";
  text += "Content-Length: " + std::to_string(head_only ? content_length : body.size()) + "\r\n\r\n";
  if (!head_only) text += body;
  return text;
}

// A 200 whose body goes in chunks of 64 KiB, so a client learns its length only by counting.
std::string chunked_response(std::string_view body) {
  constexpr std::size_t k_chunk = 64 * 1024;
  std::string text = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n";
  char size[32];
  for (std::size_t at = 0; at < body.size(); at += k_chunk) {
    const std::size_t length = std::min(k_chunk, body.size() - at);
    std::snprintf(size, sizeof size, "%zx\r\n", length);
    text += size;
    text += body.substr(at, length);
    text += "\r\n";
  }
  return text + "0\r\n\r\n";
}

}  // namespace

ScriptedHttpServer::ScriptedHttpServer(HttpBehaviour behaviour) : m_behaviour(behaviour) {
  m_listener = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (m_listener < 0 || ::pipe2(m_stop_pipe, O_CLOEXEC) != 0) throw std::runtime_error("scripted http server: socket");
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof address;
  if (::bind(m_listener, reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0 ||
      ::listen(m_listener, 128) != 0 ||
      ::getsockname(m_listener, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    throw std::runtime_error("scripted http server: cannot listen on loopback");
  }
  m_port = ntohs(address.sin_port);
  m_accept_thread = std::thread([this] { accept_loop(); });
}

ScriptedHttpServer::~ScriptedHttpServer() {
  const char byte = 0;
  (void)!::write(m_stop_pipe[1], &byte, 1);
  m_accept_thread.join();
  std::vector<std::thread> threads;
  {
    const std::lock_guard lock(m_mutex);
    threads.swap(m_connection_threads);
  }
  for (auto& thread : threads) thread.join();
  ::close(m_listener);
  ::close(m_stop_pipe[0]);
  ::close(m_stop_pipe[1]);
}

std::string ScriptedHttpServer::url(const std::string& prefix) const {
  return "http://127.0.0.1:" + std::to_string(m_port) + prefix;
}

std::optional<std::string> ScriptedHttpServer::stored(const std::string& target) const {
  const std::lock_guard lock(m_mutex);
  const auto found = m_values.find(target);
  if (found == m_values.end()) return std::nullopt;
  return found->second;
}

void ScriptedHttpServer::store(const std::string& target, std::string value) {
  const std::lock_guard lock(m_mutex);
  m_values[target] = std::move(value);
}

void ScriptedHttpServer::accept_loop() {
  for (;;) {
    pollfd fds[2] = {{m_listener, POLLIN, 0}, {m_stop_pipe[0], POLLIN, 0}};
    if (::poll(fds, 2, -1) < 0 || (fds[1].revents & POLLIN) != 0) return;
    const int fd = ::accept4(m_listener, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;
    ++m_accepted;
    const std::size_t open = ++m_open;
    std::size_t most = m_most_open.load();
    while (open > most && !m_most_open.compare_exchange_weak(most, open)) {
    }
    const std::lock_guard lock(m_mutex);
    m_connection_threads.emplace_back([this, fd] { serve(fd); });
  }
}

void ScriptedHttpServer::serve(int fd) {
  if (m_behaviour.load() != HttpBehaviour::close_at_once) {
    std::string pending;
    while (answer(fd, pending)) {
    }
  }
  --m_open;
  ::close(fd);
}

bool ScriptedHttpServer::answer(int fd, std::string& pending) {
  std::size_t head_end = std::string::npos;
  while ((head_end = pending.find("\r\n\r\n")) == std::string::npos) {
    if (pending.size() > k_header_limit || !read_more(fd, m_stop_pipe[0], pending)) return false;
  }
  const auto parsed = parse_head(std::string_view(pending).substr(0, head_end));
  if (!parsed) return false;
  Request request = *parsed;
  std::size_t body_length = 0;
  if (const auto found = request.headers.find("content-length"); found != request.headers.end()) {
    body_length = std::stoul(found->second);
  }
  while (pending.size() < head_end + 4 + body_length) {
    if (!read_more(fd, m_stop_pipe[0], pending)) return false;
  }
  request.body = pending.substr(head_end + 4, body_length);
  pending.erase(0, head_end + 4 + body_length);
  ++m_requests;

  switch (m_behaviour.load()) {
    case HttpBehaviour::garbage:
      return send_all(fd, std::string_view("\x16\x03\x01 this is not an HTTP response\r\n\r\n"));
    case HttpBehaviour::lying_length_then_close:
      send_all(fd, "HTTP/1.1 200 OK\r\nContent-Length: 1000000\r\n\r\n0123456789");
      return false;
    case HttpBehaviour::lying_length_then_hang:
      send_all(fd, "HTTP/1.1 200 OK\r\nContent-Length: 1000000\r\n\r\n0123456789");
      while (read_more(fd, m_stop_pipe[0], pending)) {
      }
      return false;
    case HttpBehaviour::hang:
      while (read_more(fd, m_stop_pipe[0], pending)) {
      }
      return false;
    case HttpBehaviour::close_at_once: return false;
    case HttpBehaviour::store:
    case HttpBehaviour::store_chunked:
    case HttpBehaviour::store_then_close: break;
  }
  const HttpBehaviour behaviour = m_behaviour.load();

  std::string reply;
  {
    const std::lock_guard lock(m_mutex);
    const auto found = m_values.find(request.target);
    if (request.method == "GET" || request.method == "HEAD") {
      if (found == m_values.end()) {
        reply = response(404, "Not Found", "not found\n", request.method == "HEAD", 10);
      } else if (behaviour == HttpBehaviour::store_chunked && request.method == "GET") {
        reply = chunked_response(found->second);
      } else {
        reply = response(200, "OK", found->second, request.method == "HEAD", found->second.size());
      }
    } else if (request.method == "PUT") {
      const auto condition = request.headers.find("if-none-match");
      if (condition != request.headers.end() && condition->second == "*" && found != m_values.end()) {
        reply = response(412, "Precondition Failed", "");
      } else {
        reply = response(found == m_values.end() ? 201 : 204, found == m_values.end() ? "Created" : "No Content", "");
        m_values[request.target] = request.body;
      }
    } else if (request.method == "DELETE") {
      reply = found == m_values.end() ? response(404, "Not Found", "") : response(204, "No Content", "");
      if (found != m_values.end()) m_values.erase(found);
    } else {
      reply = response(405, "Method Not Allowed", "");
    }
  }
  const auto connection = request.headers.find("connection");
  const bool close = connection != request.headers.end() && lower(connection->second) == "close";
  return send_all(fd, reply) && !close && behaviour != HttpBehaviour::store_then_close;
}

}  // namespace jitcache::testing
