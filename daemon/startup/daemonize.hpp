// Detaching from the terminal without hiding start-up errors: the parent forks, the child starts a
// new session and does all the start-up work, and reports "ready" or its error through a pipe; the
// parent prints the error (or nothing) and exits with the child's verdict. So `jitcached` without
// --foreground returns 0 only once the socket is accepting connections.
// Thread safety: call before any thread is started.
#pragma once

#include <string>

namespace jitcache::daemon::startup {

class Detacher {
 public:
  // Forks. Returns only in the child; the parent waits for the child's report and exits.
  static Detacher detach();

  void report_ready();
  void report_failure(const std::string& message);

 private:
  explicit Detacher(int fd) : m_fd(fd) {}
  int m_fd = -1;
};

}  // namespace jitcache::daemon::startup
