// An open directory descriptor (O_DIRECTORY), closed on destruction. The publisher writes and
// renames relative to it (openat, renameat, unlinkat), so a directory swapped under the path after
// start-up is never written through.
// Thread safety: a move-only value; the descriptor may be used from any thread.
#pragma once

#include <unistd.h>

#include <utility>

namespace jitcache::daemon::publish {

class DirectoryFd {
 public:
  DirectoryFd() = default;
  explicit DirectoryFd(int fd) : m_fd(fd) {}
  DirectoryFd(DirectoryFd&& other) noexcept : m_fd(std::exchange(other.m_fd, -1)) {}
  DirectoryFd& operator=(DirectoryFd&& other) noexcept {
    if (this != &other) {
      if (m_fd >= 0) ::close(m_fd);
      m_fd = std::exchange(other.m_fd, -1);
    }
    return *this;
  }
  DirectoryFd(const DirectoryFd&) = delete;
  DirectoryFd& operator=(const DirectoryFd&) = delete;
  ~DirectoryFd() {
    if (m_fd >= 0) ::close(m_fd);
  }

  int get() const { return m_fd; }

 private:
  int m_fd = -1;
};

}  // namespace jitcache::daemon::publish
