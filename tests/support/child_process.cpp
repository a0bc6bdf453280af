#include <tests/support/child_process.hpp>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <stdexcept>
#include <string_view>

extern char** environ;

namespace jitcache::testing {

namespace {

int decode_wait_status(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return -1;
}

// The child's environment: the caller's, changed by `env`. Built before fork, because the child of a
// multi-threaded parent (the CUDA driver starts threads) may only call async-signal-safe functions
// such as execve, not setenv or malloc.
std::vector<std::string> child_environment(const std::vector<EnvChange>& env) {
  std::vector<std::string> result;
  for (char** entry = environ; *entry != nullptr; ++entry) {
    const std::string_view text(*entry);
    const std::string_view name = text.substr(0, text.find('='));
    bool changed = false;
    for (const auto& change : env) changed = changed || change.name == name;
    if (!changed) result.emplace_back(text);
  }
  for (const auto& change : env) {
    if (change.value) result.push_back(change.name + "=" + *change.value);
  }
  return result;
}

std::vector<char*> pointers_to(std::vector<std::string>& strings) {
  std::vector<char*> pointers;
  for (auto& text : strings) pointers.push_back(text.data());
  pointers.push_back(nullptr);
  return pointers;
}

ChildResult run(const std::vector<std::string>& argv, const std::vector<EnvChange>& env,
                std::chrono::milliseconds timeout, bool capture_errors) {
  if (argv.empty()) throw std::invalid_argument("run_child: no program");
  std::vector<std::string> arg_strings = argv;
  std::vector<std::string> env_strings = child_environment(env);
  const std::vector<char*> args = pointers_to(arg_strings);
  const std::vector<char*> environment = pointers_to(env_strings);
  int out[2];
  int err[2] = {-1, -1};
  if (::pipe2(out, O_CLOEXEC) != 0) throw std::runtime_error("run_child: pipe failed");
  if (capture_errors && ::pipe2(err, O_CLOEXEC) != 0) {
    ::close(out[0]);
    ::close(out[1]);
    throw std::runtime_error("run_child: pipe failed");
  }
  const pid_t pid = ::fork();
  if (pid < 0) {
    for (const int fd : {out[0], out[1], err[0], err[1]}) {
      if (fd >= 0) ::close(fd);
    }
    throw std::runtime_error("run_child: fork failed");
  }
  if (pid == 0) {
    ::dup2(out[1], 1);  // the pipe's O_CLOEXEC ends stay behind at execve; this copy does not
    if (capture_errors) ::dup2(err[1], 2);
    ::execve(args[0], args.data(), environment.data());
    ::_exit(127);
  }
  ::close(out[1]);
  if (capture_errors) ::close(err[1]);

  ChildResult result;
  pollfd fds[2] = {{out[0], POLLIN, 0}, {err[0], POLLIN, 0}};
  std::string* sinks[2] = {&result.output, &result.errors};
  int open_count = capture_errors ? 2 : 1;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  bool timed_out = false;
  while (open_count > 0) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      timed_out = true;
      break;
    }
    const int ready = ::poll(fds, capture_errors ? 2 : 1, static_cast<int>(std::min<long long>(left.count(), INT_MAX)));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) continue;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      char buffer[4096];
      const ssize_t got = ::read(fds[i].fd, buffer, sizeof(buffer));
      if (got < 0 && errno == EINTR) continue;
      if (got > 0) {
        sinks[i]->append(buffer, static_cast<std::size_t>(got));
        continue;
      }
      ::close(fds[i].fd);  // EOF: the child closed it (normally by exiting)
      fds[i].fd = -1;
      --open_count;
    }
  }
  for (const pollfd& fd : fds) {
    if (fd.fd >= 0) ::close(fd.fd);
  }

  int status = 0;
  if (timed_out) {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, &status, 0);
    result.status = -1;
    return result;
  }
  // Rationale: stdout can close before the exit (a child that closes it on purpose); the deadline
  // still holds for the exit itself.
  for (;;) {
    if (::waitpid(pid, &status, WNOHANG) == pid) {
      result.status = decode_wait_status(status);
      result.wait_status = status;
      return result;
    }
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      result.status = -1;
      return result;
    }
    ::usleep(1000);
  }
}

}  // namespace

ChildResult run_child(const std::vector<std::string>& argv, const std::vector<EnvChange>& env,
                      std::chrono::milliseconds timeout) {
  return run(argv, env, timeout, false);
}

ChildResult run_child_captured(const std::vector<std::string>& argv, const std::vector<EnvChange>& env,
                               std::chrono::milliseconds timeout) {
  return run(argv, env, timeout, true);
}

std::string self_executable() {
  char path[PATH_MAX];
  const ssize_t length = ::readlink("/proc/self/exe", path, sizeof(path) - 1);
  if (length <= 0) throw std::runtime_error("cannot read /proc/self/exe");
  return std::string(path, static_cast<std::size_t>(length));
}

}  // namespace jitcache::testing
