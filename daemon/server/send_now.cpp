#include <daemon/server/send_now.hpp>

#include <sys/socket.h>

#include <cerrno>
#include <cstring>
#include <string>

namespace jitcache::daemon::server {

common::Result<std::size_t> send_now(int socket, std::span<const iovec> parts) {
  msghdr message{};
  message.msg_iov = const_cast<iovec*>(parts.data());
  message.msg_iovlen = parts.size();
  for (;;) {
    const ssize_t n = ::sendmsg(socket, &message, MSG_DONTWAIT | MSG_NOSIGNAL);
    if (n >= 0) return static_cast<std::size_t>(n);
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) return std::size_t{0};
    return common::make_error(common::ErrorCode::io, std::string("sendmsg: ") + std::strerror(errno));
  }
}

}  // namespace jitcache::daemon::server
