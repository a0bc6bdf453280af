// One child process with its stdin, stdout and stderr connected to the caller, started under
// resource limits, with every other descriptor closed. The compile runner's process plumbing.
//
// Rationale: fork + exec rather than posix_spawn, because RLIMIT_CPU and RLIMIT_AS must be in place
// before the worker runs its first instruction, and posix_spawn cannot set them. Between fork and
// exec the child makes only async-signal-safe calls (the daemon is multi-threaded).
// Thread safety: one object per thread; independent objects may run concurrently.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include <common/result.hpp>

#include <daemon/compile/compile_limits.hpp>

namespace jitcache::daemon::compile {

// How the child ended, as wait4 saw it.
struct ExitStatus {
  bool exited = false;    // exit code in `code`
  bool signaled = false;  // signal in `signal`
  int code = 0;
  int signal = 0;
  std::chrono::microseconds cpu_time{0};  // user + system
};

class WorkerProcess {
 public:
  // Starts `path` with `args` (argv[1..]). Its stdin/stdout/stderr are stream sockets whose other
  // ends this object holds, close-on-exec and non-blocking. Error io when it cannot be started.
  static common::Result<WorkerProcess> spawn(const std::string& path, const std::vector<std::string>& args,
                                             const CompileLimits& limits);

  WorkerProcess(WorkerProcess&& other) noexcept;
  WorkerProcess& operator=(WorkerProcess&&) = delete;
  WorkerProcess(const WorkerProcess&) = delete;
  // Kills (SIGKILL) and reaps a child that is still there: never a zombie, never a stray worker.
  ~WorkerProcess();

  int stdin_fd() const { return m_stdin; }
  int stdout_fd() const { return m_stdout; }
  int stderr_fd() const { return m_stderr; }
  // Readable (POLLIN) once the child has exited; -1 where pidfds are unavailable.
  int exit_fd() const { return m_pidfd; }
  void close_stdin();

  void kill();
  // Whether the child has not exited yet; it is not reaped (wait() does that).
  bool running() const;
  // Blocks until the child has exited and reaps it; call once.
  ExitStatus wait();

 private:
  WorkerProcess() = default;
  pid_t m_pid = -1;
  int m_stdin = -1;
  int m_stdout = -1;
  int m_stderr = -1;
  int m_pidfd = -1;
  bool m_reaped = false;
};

}  // namespace jitcache::daemon::compile
