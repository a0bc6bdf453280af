// A scripted stand-in daemon on a real Unix socket, for unit tests of the client's side of the
// protocol: each connection it accepts is handled by the next step of a script, so a lost
// connection, an `unavailable` answer or a garbage reply happens exactly where the test says, not
// by the timing of a real daemon. Header-only because it asserts with Catch2 (in the constructor,
// on the test's thread); the steps run on the stand-in's thread and report by return value.
// Thread safety: the script runs on the stand-in's own thread; accepted() may be read from any.
#pragma once

#include <catch2/catch.hpp>

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include <client/src/transport/daemon_client.hpp>
#include <proto/messages.hpp>
#include <proto/wire.hpp>

namespace jitcache::testing {

inline bool read_exact(int fd, std::uint8_t* out, std::size_t size) {
  std::size_t done = 0;
  while (done < size) {
    const ssize_t n = ::recv(fd, out + done, size - done, 0);
    if (n <= 0) return false;
    done += static_cast<std::size_t>(n);
  }
  return true;
}

// A request as the stand-in daemon read it.
struct Request {
  proto::FrameHeader header;
  std::vector<std::uint8_t> payload;
};

inline bool read_request(int fd, Request& request) {
  proto::HeaderBytes raw{};
  if (!read_exact(fd, raw.data(), raw.size())) return false;
  if (proto::check_request_header(raw, proto::k_default_max_frame_bytes, request.header)) return false;
  request.payload.resize(request.header.payload_length);
  return read_exact(fd, request.payload.data(), request.payload.size());
}

// Answers on the stand-in's thread, so it reports a short write by its return value, not by a
// Catch2 assertion (which must stay on the test's thread).
inline bool answer(int fd, const Request& request, proto::Status status, const proto::Payload& payload = {}) {
  const proto::Payload frame = proto::encode_frame(request.header.op, status, request.header.request_id, payload);
  return ::send(fd, frame.data(), frame.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(frame.size());
}

// One connection's part of the script: given the accepted socket, it does its part and returns;
// the stand-in then closes the socket.
using Step = std::function<void(int fd)>;

// A stand-in daemon that serves one Step per accepted connection, in order, on its own thread.
class ScriptedDaemon {
 public:
  ScriptedDaemon(const std::string& path, std::vector<Step> script) : m_path(path) {
    m_listen = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    REQUIRE(m_listen >= 0);
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    std::strncpy(address.sun_path, m_path.c_str(), sizeof(address.sun_path) - 1);
    REQUIRE(::bind(m_listen, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0);
    REQUIRE(::listen(m_listen, 16) == 0);
    m_thread = std::thread([this, script = std::move(script)] {
      for (const Step& step : script) {
        const int fd = ::accept4(m_listen, nullptr, nullptr, SOCK_CLOEXEC);
        if (fd < 0) return;
        ++m_accepted;
        step(fd);
        ::close(fd);
      }
    });
  }
  ~ScriptedDaemon() {
    ::shutdown(m_listen, SHUT_RDWR);  // ends an accept still waiting for a step nobody reaches
    m_thread.join();
    ::close(m_listen);
  }

  client::transport::ConnectOptions options() const {
    client::transport::ConnectOptions options;
    options.socket_path = m_path;
    options.io_timeout = std::chrono::seconds(5);
    return options;
  }
  int accepted() const { return m_accepted.load(); }

 private:
  std::string m_path;
  int m_listen = -1;
  std::atomic<int> m_accepted{0};
  std::thread m_thread;
};

}  // namespace jitcache::testing
