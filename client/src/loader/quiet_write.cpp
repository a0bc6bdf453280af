#include <client/src/loader/quiet_write.hpp>

#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>

namespace jitcache::client::loader {

namespace {

bool sigpipe_pending() {
  sigset_t pending;
  sigemptyset(&pending);
  return ::sigpending(&pending) == 0 && sigismember(&pending, SIGPIPE) == 1;
}

bool write_loop(int fd, std::string_view bytes, bool socket, int wait_ms) {
  using Clock = std::chrono::steady_clock;
  const auto deadline = Clock::now() + std::chrono::milliseconds(wait_ms < 0 ? 0 : wait_ms);
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = socket ? ::send(fd, bytes.data() + done, bytes.size() - done, MSG_NOSIGNAL)
                             : ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && wait_ms >= 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
      pollfd ready{fd, POLLOUT, 0};
      if (left <= 0 || (::poll(&ready, 1, static_cast<int>(left)) == 0)) {
        errno = ETIMEDOUT;
        return false;
      }
      continue;
    }
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

bool write_all_without_sigpipe(int fd, std::string_view bytes, int wait_ms) {
  struct stat st {};
  if (::fstat(fd, &st) == 0 && S_ISSOCK(st.st_mode)) return write_loop(fd, bytes, true, wait_ms);
  sigset_t pipe_only;
  sigemptyset(&pipe_only);
  sigaddset(&pipe_only, SIGPIPE);
  sigset_t old;
  if (::pthread_sigmask(SIG_BLOCK, &pipe_only, &old) != 0) return false;
  const bool was_pending = sigpipe_pending();
  const bool written = write_loop(fd, bytes, false, wait_ms);
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
