#include <client/src/transport/owned_socket.hpp>

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

namespace jitcache::client::transport {

int descriptor_floor() {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return k_descriptor_floor;
  // Half the limit leaves the program the low half; never below 3 (the standard streams).
  const auto half = static_cast<long long>(limit.rlim_cur / 2);
  return static_cast<int>(std::max<long long>(3, std::min<long long>(k_descriptor_floor, half)));
}

OwnedSocket OwnedSocket::adopt(int fd) {
  OwnedSocket socket;
  if (fd < 0) return socket;
  int moved = ::fcntl(fd, F_DUPFD_CLOEXEC, descriptor_floor());
  if (moved < 0) moved = ::fcntl(fd, F_DUPFD_CLOEXEC, 3);  // a tiny RLIMIT_NOFILE: anywhere but 0-2
  const int error = errno;
  ::close(fd);
  if (moved < 0) {
    errno = error;
    return socket;
  }
  struct stat st {};
  if (::fstat(moved, &st) != 0 || !S_ISSOCK(st.st_mode)) {
    const int stat_error = errno;
    ::close(moved);
    errno = stat_error != 0 ? stat_error : ENOTSOCK;
    return socket;
  }
  socket.m_fd = moved;
  socket.m_device = st.st_dev;
  socket.m_inode = st.st_ino;
  socket.m_pid = ::getpid();
  return socket;
}

OwnedSocket& OwnedSocket::operator=(OwnedSocket&& other) noexcept {
  if (this != &other) {
    release();
    m_fd = std::exchange(other.m_fd, -1);
    m_device = other.m_device;
    m_inode = other.m_inode;
    m_pid = other.m_pid;
  }
  return *this;
}

bool OwnedSocket::still_ours() const {
  if (m_fd < 0) return false;
  struct stat st {};
  if (::fstat(m_fd, &st) != 0) return false;
  return S_ISSOCK(st.st_mode) && st.st_dev == m_device && st.st_ino == m_inode;
}

int OwnedSocket::verified() {
  if (m_fd < 0) return -1;
  if (m_pid != ::getpid()) {
    release();
    return -1;
  }
  if (!still_ours()) {
    m_fd = -1;  // the program's descriptor now: forgotten, never closed
    return -1;
  }
  return m_fd;
}

void OwnedSocket::release() {
  if (m_fd < 0) return;
  // In a child of fork() the same socket is still ours to close (the child's copy only).
  if (still_ours()) ::close(m_fd);
  m_fd = -1;
}

}  // namespace jitcache::client::transport
