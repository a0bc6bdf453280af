#include <tests/support/daemon_process.hpp>

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <stdexcept>
#include <string>
#include <thread>

namespace jitcache::testing {

namespace {
std::string env_or(const char* name, const char* fallback) {
  const char* value = std::getenv(name);
  return (value != nullptr && *value != '\0') ? value : fallback;
}

int decode_wait_status(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return -1;
}
}  // namespace

std::string daemon_executable() { return env_or("JITCACHE_DAEMON_PATH", JITCACHE_DAEMON_PATH); }
std::string cli_executable() { return env_or("JITCACHE_CLI_PATH", JITCACHE_CLI_PATH); }

DaemonProcess::DaemonProcess(const TempDir& state, DaemonOptions options)
    : m_options(std::move(options)),
      m_socket(state.file("jitcached.sock")),
      m_state_dir(state.file("store")),
      m_log(state.file("jitcached.log")) {}

DaemonProcess::~DaemonProcess() {
  if (m_pid > 0) kill_hard();
}

std::vector<std::string> DaemonProcess::default_args() const {
  std::vector<std::string> args{daemon_executable(), "--foreground", "--socket",    m_socket,
                                "--state-dir",       m_state_dir,    "--log-level", m_options.log_level};
  args.insert(args.end(), m_options.extra_args.begin(), m_options.extra_args.end());
  return args;
}

pid_t DaemonProcess::spawn(const std::vector<std::string>& args, const std::string& output_path) {
  pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    int out = ::open(output_path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (out >= 0) {
      ::dup2(out, 1);
      ::dup2(out, 2);
    }
    for (const auto& [name, value] : m_options.extra_env) ::setenv(name.c_str(), value.c_str(), 1);
    if (m_options.descriptor_limit) {
      const rlimit limit{m_options.descriptor_limit->first, m_options.descriptor_limit->second};
      if (::setrlimit(RLIMIT_NOFILE, &limit) != 0) ::_exit(126);
    }
    if (m_options.listen_fd >= 0) {
      // What systemd does: the socket as fd 3 (inherited: no close-on-exec), LISTEN_PID this process.
      if (m_options.listen_fd != 3) {
        ::dup2(m_options.listen_fd, 3);
      } else {
        ::fcntl(3, F_SETFD, 0);
      }
      ::setenv("LISTEN_FDS", "1", 1);
      ::setenv("LISTEN_PID", std::to_string(::getpid()).c_str(), 1);
    }
    if (m_options.before_exec) m_options.before_exec();
    std::vector<char*> argv;
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  return pid;
}

client::transport::ConnectOptions DaemonProcess::connect_options() const {
  client::transport::ConnectOptions options;
  options.socket_path = m_socket;
  options.io_timeout = std::chrono::seconds(30);
  return options;
}

client::transport::DaemonClient DaemonProcess::client() const {
  auto c = client::transport::DaemonClient::connect(connect_options());
  if (!c) throw std::runtime_error("cannot connect to the test daemon: " + c.error().message);
  return std::move(*c);
}

void DaemonProcess::start(std::chrono::milliseconds timeout) {
  if (m_pid > 0) throw std::runtime_error("daemon already running");
  m_pid = spawn(default_args(), m_log);
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (!running()) throw std::runtime_error("jitcached exited during start-up; see " + m_log);
    auto options = connect_options();
    options.io_timeout = std::chrono::seconds(2);
    if (auto c = client::transport::DaemonClient::connect(options); c && c->ping()) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  kill_hard();
  throw std::runtime_error("jitcached did not answer PING in time; see " + m_log);
}

bool DaemonProcess::running() {
  if (m_pid <= 0) return false;
  int status = 0;
  if (::waitpid(m_pid, &status, WNOHANG) == m_pid) {
    m_pid = -1;
    return false;
  }
  return true;
}

int DaemonProcess::stop(std::chrono::milliseconds timeout) {
  if (m_pid <= 0) throw std::runtime_error("daemon not running");
  ::kill(m_pid, SIGTERM);
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    int status = 0;
    if (::waitpid(m_pid, &status, WNOHANG) == m_pid) {
      m_pid = -1;
      return decode_wait_status(status);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  kill_hard();
  throw std::runtime_error("jitcached did not exit within the timeout after SIGTERM");
}

void DaemonProcess::kill_hard() {
  if (m_pid <= 0) return;
  ::kill(m_pid, SIGKILL);
  int status = 0;
  ::waitpid(m_pid, &status, 0);
  m_pid = -1;
}

DaemonProcess::RunResult DaemonProcess::run_to_exit(const std::vector<std::string>& args,
                                                    std::chrono::milliseconds timeout) {
  const std::string output_path = m_log + ".run";
  ::unlink(output_path.c_str());
  std::vector<std::string> argv{daemon_executable()};
  argv.insert(argv.end(), args.begin(), args.end());
  pid_t pid = spawn(argv, output_path);
  RunResult result;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    int status = 0;
    if (::waitpid(pid, &status, WNOHANG) == pid) {
      result.status = decode_wait_status(status);
      break;
    }
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      result.status = -1;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  try {
    result.output = read_file(output_path);
  } catch (const std::exception&) {
  }
  return result;
}

}  // namespace jitcache::testing
