#include <daemon/server/descriptor_passing.hpp>

#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include <common/descriptor_send.hpp>

namespace jitcache::daemon::server {

common::Result<std::size_t> send_with_descriptor(int socket, proto::Bytes bytes, int fd) {
  for (;;) {
    const ssize_t n = common::send_bytes_with_descriptor(socket, bytes, fd, MSG_DONTWAIT);
    if (n > 0) return static_cast<std::size_t>(n);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      return common::make_error(common::ErrorCode::unavailable, "socket full");
    }
    return common::make_error(common::ErrorCode::io, std::string("sendmsg with a descriptor: ") +
                                                         (n < 0 ? std::strerror(errno) : "no byte sent"));
  }
}

common::Result<Received> receive_with_descriptor(int socket, std::span<std::uint8_t> buffer) {
  iovec iov{buffer.data(), buffer.size()};
  // Rationale: room for a few descriptors, so a client that sends more than one does not leave any
  // open in this process: each one received is closed unless it is the first.
  constexpr std::size_t k_room = 8;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * k_room)] = {};
  msghdr message{};
  message.msg_iov = &iov;
  message.msg_iovlen = 1;
  message.msg_control = control;
  message.msg_controllen = sizeof(control);
  for (;;) {
    const ssize_t n = ::recvmsg(socket, &message, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      return common::make_error(common::ErrorCode::unavailable, "nothing to read");
    }
    if (n < 0) return common::make_error(common::ErrorCode::io, std::string("recvmsg: ") + std::strerror(errno));
    Received received;
    received.bytes = static_cast<std::size_t>(n);
    for (cmsghdr* cmsg = CMSG_FIRSTHDR(&message); cmsg != nullptr; cmsg = CMSG_NXTHDR(&message, cmsg)) {
      if (cmsg->cmsg_level != SOL_SOCKET || cmsg->cmsg_type != SCM_RIGHTS) continue;
      const std::size_t count = (cmsg->cmsg_len - CMSG_LEN(0)) / sizeof(int);
      for (std::size_t i = 0; i < count; ++i) {
        int fd = -1;
        std::memcpy(&fd, CMSG_DATA(cmsg) + i * sizeof(int), sizeof(int));
        if (!received.fd) {
          received.fd.reset(fd);
        } else {
          ::close(fd);
        }
      }
    }
    return received;
  }
}

}  // namespace jitcache::daemon::server
