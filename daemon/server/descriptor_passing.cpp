#include <daemon/server/descriptor_passing.hpp>

#include <sys/socket.h>

#include <cerrno>
#include <cstring>
#include <string>

namespace jitcache::daemon::server {

common::Result<std::size_t> send_with_descriptor(int socket, proto::Bytes bytes, int fd) {
  iovec iov{const_cast<std::uint8_t*>(bytes.data()), bytes.size()};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  msghdr message{};
  message.msg_iov = &iov;
  message.msg_iovlen = 1;
  message.msg_control = control;
  message.msg_controllen = sizeof(control);
  cmsghdr* cmsg = CMSG_FIRSTHDR(&message);
  cmsg->cmsg_level = SOL_SOCKET;
  cmsg->cmsg_type = SCM_RIGHTS;
  cmsg->cmsg_len = CMSG_LEN(sizeof(int));
  std::memcpy(CMSG_DATA(cmsg), &fd, sizeof(int));
  for (;;) {
    const ssize_t n = ::sendmsg(socket, &message, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) return static_cast<std::size_t>(n);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      return common::make_error(common::ErrorCode::unavailable, "socket full");
    }
    return common::make_error(common::ErrorCode::io, std::string("sendmsg with a descriptor: ") +
                                                         (n < 0 ? std::strerror(errno) : "no byte sent"));
  }
}

}  // namespace jitcache::daemon::server
