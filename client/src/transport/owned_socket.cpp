#include <client/src/transport/owned_socket.hpp>

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <string_view>

namespace jitcache::client::transport {

namespace {

// The table every process starts with holds 64 descriptors (the kernel's NR_OPEN_DEFAULT on a
// 64-bit machine: docs/driver-facts.md §9); a table of unknown size is taken to be that one.
constexpr int k_initial_table_size = 64;

}  // namespace

int descriptor_table_size() {
  const int fd = ::open("/proc/self/status", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  char text[4096];
  std::size_t size = 0;
  for (;;) {
    const ssize_t n = ::read(fd, text + size, sizeof(text) - size);
    if (n > 0 && (size += static_cast<std::size_t>(n)) < sizeof(text)) continue;
    if (n < 0 && errno == EINTR) continue;
    break;
  }
  ::close(fd);
  const std::string_view status(text, size);
  constexpr std::string_view k_field = "\nFDSize:";
  const std::size_t at = status.find(k_field);
  if (at == std::string_view::npos) return 0;
  const char* first = status.data() + at + k_field.size();
  const char* last = status.data() + status.size();
  while (first < last && (*first == ' ' || *first == '\t')) ++first;
  int table = 0;
  if (std::from_chars(first, last, table).ec != std::errc() || table <= 0) return 0;
  return table;
}

namespace {

// Half the soft RLIMIT_NOFILE (the program keeps the low half), at most k_descriptor_floor.
long long half_descriptor_limit() {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return k_descriptor_floor;
  return std::min<long long>(k_descriptor_floor, static_cast<long long>(limit.rlim_cur / 2));
}

}  // namespace

bool descriptor_limit_is_small() { return half_descriptor_limit() < k_descriptor_floor; }

int descriptor_floor() {
  long long floor = half_descriptor_limit();
  // Within the table the process has now, in its upper quarter: never a number that grows it.
  const int table = descriptor_table_size();
  floor = std::min<long long>(floor, (table > 0 ? table : k_initial_table_size) * 3LL / 4);
  // Never 0-2 (the standard streams).
  return static_cast<int>(std::max<long long>(3, floor));
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
