// The real jitcached, started as a child process on a temp socket and state dir for integration
// tests (conventions: "Integration tests start the real daemon"). Thread safety: one owner.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <client/src/transport/daemon_client.hpp>

#include <tests/support/temp_dir.hpp>

namespace jitcache::testing {

// The jitcached and jitcache CLI binaries tests start: $JITCACHE_DAEMON_PATH / $JITCACHE_CLI_PATH
// when set (a bundle of the binaries copied to another machine), else the build tree's own.
std::string daemon_executable();
std::string cli_executable();

struct DaemonOptions {
  std::vector<std::string> extra_args;                         // e.g. {"--idle-timeout", "1s"}
  std::vector<std::pair<std::string, std::string>> extra_env;  // set in the child only
  std::string log_level = "warn";
  // A listening socket the test holds, passed as systemd's socket activation passes one (fd 3,
  // LISTEN_FDS=1, LISTEN_PID), so that it keeps listening across restarts; -1: the daemon binds
  // its own. The test keeps it open and closes it.
  int listen_fd = -1;
  // Runs in the child just before exec (e.g. a system-call filter, seccomp_refusal.hpp); it may
  // only make system calls.
  std::function<void()> before_exec = {};
  // RLIMIT_NOFILE (soft, hard) set in the child before it runs the daemon; none: inherited.
  std::optional<std::pair<std::uint64_t, std::uint64_t>> descriptor_limit = std::nullopt;
};

class DaemonProcess {
 public:
  // Uses `state` for both the socket (state/jitcached.sock) and the state dir (state/store).
  explicit DaemonProcess(const TempDir& state, DaemonOptions options = {});
  ~DaemonProcess();  // SIGKILL if still running
  DaemonProcess(const DaemonProcess&) = delete;
  DaemonProcess& operator=(const DaemonProcess&) = delete;

  // Starts the daemon and waits until it answers PING (throws after `timeout`).
  void start(std::chrono::milliseconds timeout = std::chrono::seconds(20));
  // SIGTERM, then waits for exit; returns the exit status (as from waitpid's WEXITSTATUS, or
  // 128+signal when it died of a signal).
  int stop(std::chrono::milliseconds timeout = std::chrono::seconds(20));
  void kill_hard();  // SIGKILL and reap
  bool running();    // false once it has exited (reaps it)

  // Starts the daemon with these args and waits for it to exit; returns its status and stderr.
  struct RunResult {
    int status = -1;
    std::string output;
  };
  RunResult run_to_exit(const std::vector<std::string>& args, std::chrono::milliseconds timeout);

  pid_t pid() const { return m_pid; }
  const std::string& socket_path() const { return m_socket; }
  const std::string& state_dir() const { return m_state_dir; }
  std::string log_path() const { return m_log; }
  client::transport::ConnectOptions connect_options() const;
  client::transport::DaemonClient client() const;  // throws when it cannot connect

 private:
  pid_t spawn(const std::vector<std::string>& args, const std::string& output_path);
  std::vector<std::string> default_args() const;

  DaemonOptions m_options;
  std::string m_socket;
  std::string m_state_dir;
  std::string m_log;
  pid_t m_pid = -1;
};

}  // namespace jitcache::testing
