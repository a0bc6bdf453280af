#include <daemon/server/instance_lock.hpp>

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <utility>

namespace jitcache::daemon::server {

using proto::ErrorCode;
using proto::make_error;

proto::Result<InstanceLock> InstanceLock::acquire(const std::string& lock_path, const std::string& what) {
  int fd = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) return make_error(ErrorCode::io, "cannot open lock file " + lock_path + ": " + std::strerror(errno));
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int error = errno;
    char buffer[32] = {};
    ssize_t n = ::pread(fd, buffer, sizeof(buffer) - 1, 0);
    ::close(fd);
    if (error == EWOULDBLOCK) {
      std::string pid = n > 0 ? std::string(buffer, static_cast<std::size_t>(n)) : std::string();
      while (!pid.empty() && pid.back() == '\n') pid.pop_back();
      const std::string holder = pid.empty() ? "" : " (pid " + pid + ")";
      return make_error(ErrorCode::unavailable,
                        "another jitcached" + holder + " is already using the " + what + "; lock " + lock_path);
    }
    return make_error(ErrorCode::io, "cannot lock " + lock_path + ": " + std::strerror(error));
  }
  InstanceLock lock(fd);
  lock.write_pid();
  return lock;
}

InstanceLock::InstanceLock(InstanceLock&& other) noexcept : m_fd(std::exchange(other.m_fd, -1)) {}

InstanceLock::~InstanceLock() {
  if (m_fd >= 0) ::close(m_fd);
}

void InstanceLock::write_pid() {
  const std::string pid = std::to_string(::getpid()) + "\n";
  if (::ftruncate(m_fd, 0) == 0) {
    [[maybe_unused]] ssize_t ignored = ::pwrite(m_fd, pid.data(), pid.size(), 0);
  }
}

}  // namespace jitcache::daemon::server
