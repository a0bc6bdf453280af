#include <common/descriptor_send.hpp>

#include <sys/socket.h>

#include <cstring>

namespace jitcache::common {

ssize_t send_bytes_with_descriptor(int socket, std::span<const std::uint8_t> bytes, int fd, int extra_flags) {
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
  return ::sendmsg(socket, &message, MSG_NOSIGNAL | extra_flags);
}

}  // namespace jitcache::common
