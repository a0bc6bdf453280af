#include <client/src/nvrtc/compile_lock.hpp>

#include <fcntl.h>
#include <sys/auxv.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <thread>

namespace jitcache::client::nvrtc {

std::string private_directory_path() {
  const char* runtime = std::getenv("XDG_RUNTIME_DIR");
  return runtime != nullptr && runtime[0] == '/' ? std::string(runtime) + "/jitcache-nvrtc"
                                                 : "/tmp/jitcache-nvrtc-" + std::to_string(::geteuid());
}

std::string private_directory() {
  // Secure-execution mode (set-user-ID and the like): XDG_RUNTIME_DIR is the caller's to name.
  if (::getauxval(AT_SECURE) != 0) return {};
  const std::string directory = private_directory_path();
  // The effective uid: the one this process writes as and the daemon files its results under (a
  // set-user-ID program's real uid is its caller's, whose planted digests it must not trust).
  ::mkdir(directory.c_str(), 0700);
  struct stat st {};
  if (::lstat(directory.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != ::geteuid() ||
      (st.st_mode & 022) != 0) {
    return {};
  }
  return directory;
}

CompileLock::CompileLock(const std::string& key_id_hex, std::chrono::milliseconds wait) {
  const std::string directory = private_directory();
  if (directory.empty()) {
    m_unavailable = "no single flight: " + private_directory_path() +
                    " is not a directory this uid owns and only it may write (another uid may have made it; "
                    "set XDG_RUNTIME_DIR, docs/transparent.md \"Single flight\")";
    return;
  }
  const std::string path = directory + "/" + key_id_hex + ".lock";
  m_fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (m_fd < 0) return;
  const auto deadline = std::chrono::steady_clock::now() + wait;
  while (true) {
    if (::flock(m_fd, LOCK_EX | LOCK_NB) == 0) {
      m_held = true;
      return;
    }
    if (errno != EWOULDBLOCK && errno != EINTR) return;
    m_waited = true;
    if (std::chrono::steady_clock::now() >= deadline) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

CompileLock::~CompileLock() {
  if (m_fd >= 0) ::close(m_fd);  // closing the file releases the lock
}

}  // namespace jitcache::client::nvrtc
