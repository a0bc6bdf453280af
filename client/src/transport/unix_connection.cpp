#include <client/src/transport/unix_connection.hpp>

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <client/src/transport/socket_access.hpp>
#include <common/descriptor_send.hpp>
#include <common/result.hpp>
#include <cstdio>
#include <cstring>
#include <thread>
#include <utility>

namespace jitcache::client::transport {

using common::ErrorCode;
using common::make_error;
using Clock = std::chrono::steady_clock;

namespace {

common::Error errno_error(ErrorCode code, const std::string& what) {
  return make_error(code, what + ": " + std::strerror(errno));
}

// Waits until fd is ready for `events` or the deadline passes.
Result<void> wait_ready(int fd, short events, Clock::time_point deadline, const char* what) {
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) return make_error(ErrorCode::timeout, std::string("timed out ") + what);
    pollfd p{fd, events, 0};
    int n = ::poll(&p, 1, static_cast<int>(left));
    if (n > 0) return {};
    if (n < 0 && errno != EINTR) return errno_error(ErrorCode::io, std::string("poll while ") + what);
  }
}

// A hint to the core that this thread is in a spin loop (lets a sibling hyper-thread run).
void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

// recv that also takes a file descriptor passed with the bytes (SCM_RIGHTS) into `descriptor`.
// MSG_CMSG_CLOEXEC: the descriptor must not leak into programs the application starts.
ssize_t receive_with_descriptor(int socket, std::uint8_t* out, std::size_t size, common::UniqueFd& descriptor) {
  iovec iov{out, size};
  alignas(cmsghdr) char control[CMSG_SPACE(2 * sizeof(int))];
  msghdr message{};
  message.msg_iov = &iov;
  message.msg_iovlen = 1;
  message.msg_control = control;
  message.msg_controllen = sizeof(control);
  const ssize_t n = ::recvmsg(socket, &message, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
  if (n <= 0) return n;
  for (cmsghdr* cmsg = CMSG_FIRSTHDR(&message); cmsg != nullptr; cmsg = CMSG_NXTHDR(&message, cmsg)) {
    if (cmsg->cmsg_level != SOL_SOCKET || cmsg->cmsg_type != SCM_RIGHTS) continue;
    const std::size_t count = (cmsg->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    for (std::size_t i = 0; i < count; ++i) {
      int fd = -1;
      std::memcpy(&fd, CMSG_DATA(cmsg) + i * sizeof(int), sizeof(int));
      if (!descriptor) {
        descriptor.reset(fd);
      } else {
        ::close(fd);
      }
    }
  }
  return n;
}

// Rationale: a daemon that binds its own socket is back within tens of milliseconds of the old
// one's exit on an idle machine; polling every 10 ms costs nothing and finds it soon after.
constexpr std::chrono::milliseconds k_restart_poll{10};

// Waits up to `restart_wait` while nothing is at the path (a daemon between its exit and its
// successor's bind), so that the path check below sees the successor's socket, not a gap.
void wait_for_path(const std::string& path, std::chrono::milliseconds restart_wait) {
  const auto deadline = Clock::now() + restart_wait;
  struct stat st {};
  while (::lstat(path.c_str(), &st) != 0 && errno == ENOENT && Clock::now() + k_restart_poll <= deadline) {
    std::this_thread::sleep_for(k_restart_poll);
  }
}

// connect(2), tried again until `restart_wait` has passed while nothing listens at the path or the
// path is missing (a daemon between its exit and its successor's bind). errno is connect's.
int connect_through_restart(int fd, const sockaddr_un& addr, std::chrono::milliseconds restart_wait) {
  const auto deadline = Clock::now() + restart_wait;
  for (;;) {
    if (::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) == 0) return 0;
    const int error = errno;
    if ((error != ECONNREFUSED && error != ENOENT) || Clock::now() + k_restart_poll > deadline) {
      errno = error;
      return -1;
    }
    std::this_thread::sleep_for(k_restart_poll);
  }
}

}  // namespace

Result<UnixConnection> UnixConnection::connect(const ConnectOptions& options) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (options.socket_path.empty() || options.socket_path.size() >= sizeof(addr.sun_path)) {
    return make_error(ErrorCode::invalid_argument, "socket path \"" + options.socket_path + "\" is empty or too long");
  }
  std::memcpy(addr.sun_path, options.socket_path.c_str(), options.socket_path.size() + 1);
  wait_for_path(options.socket_path, options.restart_wait);
  // Before connecting, so that a planted socket does not even see a connection.
  JITCACHE_TRY(check_socket_path(options.socket_path, options.trust));

  OwnedSocket socket = OwnedSocket::adopt(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (socket.raw() < 0) return errno_error(ErrorCode::io, "socket");
  const int fd = socket.raw();
  UnixConnection connection(std::move(socket), options);

  if (connect_through_restart(fd, addr, options.restart_wait) != 0) {
    // A Unix socket whose listen backlog is full answers EAGAIN; anything else means no daemon.
    if (errno == EACCES) {
      return make_error(ErrorCode::unavailable, "cannot connect to jitcached at " + options.socket_path + ": " +
                                                    permission_denied_text(options.socket_path));
    }
    if (errno != EAGAIN && errno != EINPROGRESS) {
      return errno_error(ErrorCode::unavailable, "cannot connect to jitcached at " + options.socket_path);
    }
    JITCACHE_TRY(wait_ready(fd, POLLOUT, Clock::now() + options.connect_timeout, "connecting to jitcached"));
    int so_error = 0;
    socklen_t len = sizeof(so_error);
    ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &so_error, &len);
    if (so_error != 0) {
      errno = so_error;
      return errno_error(ErrorCode::unavailable, "cannot connect to jitcached at " + options.socket_path);
    }
  }
  // Whoever listens is who serves: checked on this very connection, before anything is sent.
  JITCACHE_TRY(check_peer(fd, options.socket_path, options.trust));
  return connection;
}

UnixConnection::UnixConnection(UnixConnection&& other) noexcept
    : m_socket(std::move(other.m_socket)),
      m_options(std::move(other.m_options)),
      m_next_request_id(other.m_next_request_id),
      m_last_loss(other.m_last_loss) {}

UnixConnection& UnixConnection::operator=(UnixConnection&& other) noexcept {
  if (this != &other) {
    m_socket = std::move(other.m_socket);
    m_options = std::move(other.m_options);
    m_next_request_id = other.m_next_request_id;
    m_last_loss = other.m_last_loss;
  }
  return *this;
}

Result<int> UnixConnection::socket_fd() {
  const int fd = m_socket.verified();
  if (fd < 0)
    return make_error(ErrorCode::unavailable, "the connection to jitcached is gone (its descriptor was closed)");
  return fd;
}

Result<void> UnixConnection::write_all(Bytes bytes, Clock::time_point deadline) {
  auto socket = socket_fd();
  JITCACHE_TRY(socket);
  const int fd = *socket;
  std::size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::send(fd, bytes.data() + done, bytes.size() - done, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) {
      done += static_cast<std::size_t>(n);
    } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      JITCACHE_TRY(wait_ready(fd, POLLOUT, deadline, "sending to jitcached"));
    } else if (n < 0 && errno != EINTR) {
      return errno_error(ErrorCode::unavailable, "sending to jitcached");
    }
  }
  return {};
}

Result<void> UnixConnection::read_exact(std::uint8_t* out, std::size_t size, Clock::time_point deadline,
                                        std::chrono::microseconds spin, common::UniqueFd* descriptor) {
  auto socket = socket_fd();
  JITCACHE_TRY(socket);
  const int fd = *socket;
  std::size_t done = 0;
  Clock::time_point spin_until = spin.count() > 0 ? Clock::now() + spin : Clock::time_point{};
  while (done < size) {
    ssize_t n = descriptor != nullptr ? receive_with_descriptor(fd, out + done, size - done, *descriptor)
                                      : ::recv(fd, out + done, size - done, MSG_DONTWAIT);
    if (n > 0) {
      done += static_cast<std::size_t>(n);
      if (spin.count() > 0) spin_until = Clock::now() + spin;
    } else if (n == 0) {
      return make_error(ErrorCode::unavailable, "jitcached closed the connection");
    } else if ((errno == EAGAIN || errno == EWOULDBLOCK) && Clock::now() < spin_until) {
      cpu_relax();
    } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
      if (auto ready = wait_ready(fd, POLLIN, deadline, "waiting for jitcached's reply"); !ready) {
        return ready.error();
      }
    } else if (errno != EINTR) {
      return errno_error(ErrorCode::unavailable, "reading from jitcached");
    }
  }
  return {};
}

Result<void> UnixConnection::send_raw(Bytes bytes) { return write_all(bytes, Clock::now() + m_options.io_timeout); }

Result<Reply> UnixConnection::read_reply() { return read_reply(Clock::now() + m_options.io_timeout); }

Result<Reply> UnixConnection::read_reply(Clock::time_point deadline) {
  proto::HeaderBytes raw{};
  // A descriptor rides on the frame's first byte, so the header is read with recvmsg.
  common::UniqueFd descriptor;
  JITCACHE_TRY(read_exact(raw.data(), raw.size(), deadline, m_options.reply_spin, &descriptor));
  auto header = proto::decode_reply_header(raw, m_options.max_reply_bytes);
  JITCACHE_TRY(header);
  Reply reply;
  reply.header = *header;
  reply.descriptor = std::move(descriptor);
  reply.payload.resize(header->payload_length);
  if (auto r = read_exact(reply.payload.data(), reply.payload.size(), deadline, m_options.reply_spin); !r) {
    return r.error();
  }
  return reply;
}

Result<Reply> UnixConnection::call_with_descriptor(proto::Op op, const proto::Payload& payload, int fd,
                                                   std::chrono::milliseconds timeout) {
  return call(op, payload, {}, {}, proto::k_flag_request_fd, timeout, fd);
}

Result<void> UnixConnection::send_with_descriptor(Bytes bytes, int fd, Clock::time_point deadline) {
  auto socket = socket_fd();
  JITCACHE_TRY(socket);
  for (;;) {
    const ssize_t n = common::send_bytes_with_descriptor(*socket, bytes, fd, MSG_DONTWAIT);
    if (n > 0) return write_all(bytes.subspan(static_cast<std::size_t>(n)), deadline);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      JITCACHE_TRY(wait_ready(*socket, POLLOUT, deadline, "sending to jitcached"));
    } else if (n < 0 && errno != EINTR) {
      return errno_error(ErrorCode::unavailable, "sending a descriptor to jitcached");
    }
  }
}

Result<Reply> UnixConnection::call(proto::Op op, const proto::Payload& payload, Bytes tail, Bytes trailer,
                                   std::uint16_t flags, std::chrono::milliseconds timeout, int attached_fd) {
  m_last_loss = CallLoss::none;
  const bool first = m_next_request_id == 1;
  const auto budget = timeout.count() > 0                                  ? timeout
                      : first && m_options.first_reply_timeout.count() > 0 ? m_options.first_reply_timeout
                                                                           : m_options.io_timeout;
  const auto deadline = Clock::now() + budget;
  proto::FrameHeader h;
  h.op = op;
  h.flags = flags;
  h.request_id = m_next_request_id++;
  h.payload_length = payload.size() + tail.size() + trailer.size();
  const proto::HeaderBytes header = proto::encode_header(h);
  auto sent = attached_fd >= 0 ? send_with_descriptor(Bytes(header), attached_fd, deadline)
                               : write_all(Bytes(header), deadline);
  if (sent) sent = write_all(Bytes(payload), deadline);
  if (sent && !tail.empty()) sent = write_all(tail, deadline);
  if (sent && !trailer.empty()) sent = write_all(trailer, deadline);
  if (!sent) {
    // The daemon may have refused the connection (busy) or the frame (too large) and closed: its
    // reply explains why better than EPIPE does, so return it when one is waiting.
    if (sent.error().code != ErrorCode::timeout) {
      if (auto early = read_reply(); early) return early;
    }
    if (sent.error().code == ErrorCode::unavailable) m_last_loss = CallLoss::while_sending;
    return sent.error();
  }
  auto reply = read_reply(Clock::now() + budget);
  if (!reply) {
    if (reply.error().code == ErrorCode::unavailable) m_last_loss = CallLoss::while_awaiting_reply;
    if (first && m_options.first_reply_timeout.count() > 0) {
      const bool timed_out = reply.error().code == ErrorCode::timeout;
      char waited[64];
      std::snprintf(waited, sizeof(waited), "no answer within %.1f s", static_cast<double>(budget.count()) / 1000.0);
      const auto held = held_by_service_manager_text(m_socket.verified(), m_options.socket_path,
                                                     timed_out ? waited : "the connection was closed before an answer");
      if (held) return make_error(reply.error().code, *held);
    }
    return reply.error();
  }
  if (reply->header.request_id != h.request_id && reply->header.request_id != 0) {
    return make_error(ErrorCode::corrupt, "reply answers request " + std::to_string(reply->header.request_id) +
                                              ", expected " + std::to_string(h.request_id));
  }
  return reply;
}

bool UnixConnection::wait_for_close() {
  const auto deadline = Clock::now() + m_options.io_timeout;
  auto socket = socket_fd();
  if (!socket) return true;  // not ours any more: nothing of ours is open
  const int fd = *socket;
  std::uint8_t buffer[4096];
  for (;;) {
    ssize_t n = ::recv(fd, buffer, sizeof(buffer), MSG_DONTWAIT);
    if (n == 0) return true;
    if (n < 0 && errno == ECONNRESET) return true;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      if (!wait_ready(fd, POLLIN, deadline, "waiting for close")) return false;
    } else if (n < 0 && errno != EINTR) {
      return false;
    }
  }
}

}  // namespace jitcache::client::transport
