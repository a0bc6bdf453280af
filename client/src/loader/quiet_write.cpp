#include <client/src/loader/quiet_write.hpp>

#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>

namespace jitcache::client::loader {

namespace {

bool sigpipe_pending() {
  sigset_t pending;
  sigemptyset(&pending);
  return ::sigpending(&pending) == 0 && sigismember(&pending, SIGPIPE) == 1;
}

bool write_loop(int fd, std::string_view bytes, bool socket) {
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = socket ? ::send(fd, bytes.data() + done, bytes.size() - done, MSG_NOSIGNAL)
                             : ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return false;
    if (n == 0) {
      errno = EIO;
      return false;
    }
    done += static_cast<std::size_t>(n);
  }
  return true;
}

}  // namespace

bool write_all_without_sigpipe(int fd, std::string_view bytes) {
  struct stat st {};
  if (::fstat(fd, &st) == 0 && S_ISSOCK(st.st_mode)) return write_loop(fd, bytes, true);
  sigset_t pipe_only;
  sigemptyset(&pipe_only);
  sigaddset(&pipe_only, SIGPIPE);
  sigset_t old;
  if (::pthread_sigmask(SIG_BLOCK, &pipe_only, &old) != 0) return false;
  const bool was_pending = sigpipe_pending();
  const bool written = write_loop(fd, bytes, false);
  const int error = errno;
  if (!written && error == EPIPE && !was_pending) {
    const timespec no_wait{0, 0};
    while (::sigtimedwait(&pipe_only, nullptr, &no_wait) < 0 && errno == EINTR) {
    }
  }
  ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
  errno = error;
  return written;
}

}  // namespace jitcache::client::loader
