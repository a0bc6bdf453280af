#include <daemon/unix_socket/instance_lock.hpp>

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <spdlog/spdlog.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>

namespace jitcache::daemon::unix_socket {

using common::ErrorCode;
using common::make_error;

namespace {

// The pid a lock file records, or "" (none, or no such file).
std::string pid_in(int fd) {
  char buffer[32] = {};
  const ssize_t n = ::pread(fd, buffer, sizeof(buffer) - 1, 0);
  std::string pid = n > 0 ? std::string(buffer, static_cast<std::size_t>(n)) : std::string();
  while (!pid.empty() && pid.back() == '\n') pid.pop_back();
  return pid;
}

std::string pid_in(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return {};
  std::string pid = pid_in(fd);
  ::close(fd);
  return pid;
}

// Who holds a flock on the file `fd` is open on, from /proc/locks ("1: FLOCK  ADVISORY  WRITE 4711
// 00:2e:1234 0 EOF": the pid, then major:minor in hex and the inode), or "".
std::string flock_holder(int fd) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) return {};
  char wanted[64];
  std::snprintf(wanted, sizeof wanted, "%02x:%02x:%llu", ::major(st.st_dev), ::minor(st.st_dev),
                static_cast<unsigned long long>(st.st_ino));
  std::ifstream locks("/proc/locks");
  std::string line;
  while (std::getline(locks, line)) {
    std::istringstream fields(line);
    std::string id, kind, mode, access, pid, file;
    // A waiter's line has "->" where a holder's has its kind.
    if (!(fields >> id >> kind) || kind != "FLOCK") continue;
    if (fields >> mode >> access >> pid >> file && file == wanted) return pid;
  }
  return {};
}

common::Error held_by_another(const std::string& pid, const std::string& what, const std::string& lock) {
  const std::string holder = pid.empty() ? "" : " (pid " + pid + ")";
  return make_error(ErrorCode::unavailable,
                    "another jitcached" + holder + " is already using the " + what + "; lock " + lock);
}

}  // namespace

common::Result<InstanceLock> InstanceLock::acquire(const std::string& lock_path, const std::string& what) {
  int fd = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) return make_error(ErrorCode::io, "cannot open lock file " + lock_path + ": " + std::strerror(errno));
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int error = errno;
    const std::string pid = pid_in(fd);
    ::close(fd);
    if (error == EWOULDBLOCK) return held_by_another(pid, what, lock_path);
    return make_error(ErrorCode::io, "cannot lock " + lock_path + ": " + std::strerror(error));
  }
  InstanceLock lock(fd);
  lock.write_pid();
  return lock;
}

common::Result<InstanceLock> InstanceLock::acquire_directory(const std::string& directory, const std::string& lock_file,
                                                             const std::string& what) {
  const std::string lock_path = directory + "/" + lock_file;
  int directory_fd = ::open(directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (directory_fd < 0) {
    return make_error(ErrorCode::io, "cannot open the " + what + " to lock it: " + std::strerror(errno));
  }
  if (::flock(directory_fd, LOCK_EX | LOCK_NB) != 0) {
    const int error = errno;
    if (error == EWOULDBLOCK) {
      // The lock file names the holder unless it was deleted or replaced; the kernel always can.
      std::string pid = pid_in(lock_path);
      if (pid.empty()) pid = flock_holder(directory_fd);
      ::close(directory_fd);
      return held_by_another(pid, what, directory + " (the directory itself)");
    }
    spdlog::warn("cannot lock the {} itself ({}): only its lock file {} keeps a second jitcached out", what,
                 std::strerror(error), lock_path);
    ::close(directory_fd);
    directory_fd = -1;
  }
  auto file = acquire(lock_path, what);
  if (!file) {
    if (directory_fd >= 0) ::close(directory_fd);
    return file.error();
  }
  InstanceLock lock(std::exchange(file->m_fd, -1), directory_fd);
  return lock;
}

InstanceLock::InstanceLock(InstanceLock&& other) noexcept
    : m_fd(std::exchange(other.m_fd, -1)), m_directory_fd(std::exchange(other.m_directory_fd, -1)) {}

InstanceLock::~InstanceLock() {
  if (m_fd >= 0) ::close(m_fd);
  if (m_directory_fd >= 0) ::close(m_directory_fd);
}

void InstanceLock::write_pid() {
  const std::string pid = std::to_string(::getpid()) + "\n";
  if (::ftruncate(m_fd, 0) == 0) {
    [[maybe_unused]] ssize_t ignored = ::pwrite(m_fd, pid.data(), pid.size(), 0);
  }
}

}  // namespace jitcache::daemon::unix_socket
