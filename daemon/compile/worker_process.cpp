#include <daemon/compile/worker_process.hpp>

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <common/result.hpp>
#include <cstring>
#include <utility>

namespace jitcache::daemon::compile {

namespace {

common::Error io_error(const std::string& what) {
  return common::make_error(common::ErrorCode::io, what + ": " + std::strerror(errno));
}

// Rationale: raw syscalls, because Debian 12's glibc 2.36 <sys/pidfd.h> declares these without C
// linkage, so C++ cannot link them.
int pidfd_open(pid_t pid) { return static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)); }
bool pidfd_kill(int pidfd) { return ::syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, nullptr, 0) == 0; }

void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

// A connected pair: [0] stays with the parent (non-blocking), [1] becomes one of the child's stdio.
struct Channel {
  int parent = -1;
  int child = -1;
  ~Channel() {
    close_fd(parent);
    close_fd(child);
  }
};

common::Result<void> open_channel(Channel& channel) {
  int fds[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) return io_error("socketpair");
  channel.parent = fds[0];
  channel.child = fds[1];
  if (::fcntl(channel.parent, F_SETFL, O_NONBLOCK) != 0) return io_error("fcntl O_NONBLOCK");
  return {};
}

// Runs in the child between fork and exec: async-signal-safe calls only.
[[noreturn]] void exec_child(int in, int out, int err, const char* path, char* const* argv, const CompileLimits& limits,
                             pid_t daemon) {
  // Rationale: a daemon killed by SIGKILL runs no destructor, so nothing would kill a worker in the
  // middle of a compile: it would run on, reparented to init, for up to compile_wall_time. The
  // kernel sends the death signal when the thread that forked exits (the compile thread or the
  // spare-worker thread, both of which outlive their workers, docs/compile-service.md); the
  // getppid() check catches a daemon that died before prctl took effect. The flag survives exec.
  if (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || ::getppid() != daemon) _exit(127);
  if (::dup2(in, STDIN_FILENO) < 0 || ::dup2(out, STDOUT_FILENO) < 0 || ::dup2(err, STDERR_FILENO) < 0) _exit(127);
  ::close_range(3, ~0U, 0);
  // Rationale: ignored signals and the signal mask survive exec. The daemon ignores SIGPIPE and may
  // block others on its threads; the worker starts with the defaults, so SIGXCPU kills it.
  for (int sig = 1; sig < NSIG; ++sig) {
    if (sig != SIGKILL && sig != SIGSTOP) ::signal(sig, SIG_DFL);
  }
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  const auto cpu = static_cast<rlim_t>(limits.cpu_time.count());
  const rlimit cpu_limit{cpu, cpu + 1};  // soft: SIGXCPU; hard, a second later: SIGKILL
  if (cpu > 0 && ::setrlimit(RLIMIT_CPU, &cpu_limit) != 0) _exit(127);
  if (limits.address_space_bytes > 0) {
    const rlimit memory{limits.address_space_bytes, limits.address_space_bytes};
    if (::setrlimit(RLIMIT_AS, &memory) != 0) _exit(127);
  }
  ::execv(path, argv);
  constexpr char k_message[] = "jitcache: cannot exec the compile worker\n";
  [[maybe_unused]] auto ignored = ::write(STDERR_FILENO, k_message, sizeof k_message - 1);
  _exit(127);
}

}  // namespace

common::Result<WorkerProcess> WorkerProcess::spawn(const std::string& path, const std::vector<std::string>& args,
                                                   const CompileLimits& limits) {
  if (::access(path.c_str(), X_OK) != 0) return io_error("compile worker " + path);
  Channel in, out, err;
  for (Channel* channel : {&in, &out, &err}) {
    JITCACHE_TRY(open_channel(*channel));
  }
  // Everything the child needs is built before fork: it must not allocate afterwards.
  std::vector<std::string> strings{path};
  strings.insert(strings.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& s : strings) argv.push_back(s.data());
  argv.push_back(nullptr);

  const pid_t daemon = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) return io_error("fork");
  if (pid == 0) exec_child(in.child, out.child, err.child, path.c_str(), argv.data(), limits, daemon);

  WorkerProcess process;
  process.m_pid = pid;
  process.m_pidfd = pidfd_open(pid);
  if (process.m_pidfd >= 0) ::fcntl(process.m_pidfd, F_SETFD, FD_CLOEXEC);
  process.m_stdin = std::exchange(in.parent, -1);
  process.m_stdout = std::exchange(out.parent, -1);
  process.m_stderr = std::exchange(err.parent, -1);
  return process;
}

WorkerProcess::WorkerProcess(WorkerProcess&& other) noexcept
    : m_pid(std::exchange(other.m_pid, -1)),
      m_stdin(std::exchange(other.m_stdin, -1)),
      m_stdout(std::exchange(other.m_stdout, -1)),
      m_stderr(std::exchange(other.m_stderr, -1)),
      m_pidfd(std::exchange(other.m_pidfd, -1)),
      m_reaped(std::exchange(other.m_reaped, true)) {}

WorkerProcess::~WorkerProcess() {
  if (m_pid > 0 && !m_reaped) {
    kill();
    wait();
  }
  close_fd(m_stdin);
  close_fd(m_stdout);
  close_fd(m_stderr);
  close_fd(m_pidfd);
}

void WorkerProcess::close_stdin() { close_fd(m_stdin); }

void WorkerProcess::kill() {
  // Rationale: a pidfd names this child even if it was reaped and its pid reused; the plain pid is
  // safe too while m_reaped is false, because only wait() reaps it.
  if (m_reaped) return;
  if (m_pidfd < 0 || !pidfd_kill(m_pidfd)) ::kill(m_pid, SIGKILL);
}

bool WorkerProcess::running() const {
  if (m_reaped || m_pid <= 0) return false;
  siginfo_t info{};
  // WNOWAIT: look without reaping, so wait() still collects the status and usage.
  if (::waitid(P_PID, static_cast<id_t>(m_pid), &info, WEXITED | WNOHANG | WNOWAIT) != 0) return false;
  return info.si_pid == 0;
}

ExitStatus WorkerProcess::wait() {
  ExitStatus status;
  if (m_reaped || m_pid <= 0) return status;
  int raw = 0;
  rusage usage{};
  pid_t reaped = -1;
  do {
    reaped = ::wait4(m_pid, &raw, 0, &usage);
  } while (reaped < 0 && errno == EINTR);
  m_reaped = true;
  if (reaped != m_pid) return status;
  status.exited = WIFEXITED(raw);
  status.signaled = WIFSIGNALED(raw);
  status.code = status.exited ? WEXITSTATUS(raw) : 0;
  status.signal = status.signaled ? WTERMSIG(raw) : 0;
  const auto micros = [](const timeval& t) {
    return std::chrono::seconds(t.tv_sec) + std::chrono::microseconds(t.tv_usec);
  };
  status.cpu_time = micros(usage.ru_utime) + micros(usage.ru_stime);
  return status;
}

}  // namespace jitcache::daemon::compile
