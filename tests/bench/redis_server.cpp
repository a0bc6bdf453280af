#include <tests/bench/redis_server.hpp>

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <stdexcept>
#include <thread>
#include <vector>

#include <tests/bench/log_tail.hpp>
#include <tests/bench/redis_connection.hpp>

namespace jitcache::bench {

namespace {

using Clock = std::chrono::steady_clock;

// Rationale: redis-server starts in milliseconds; a generous bound only matters on a loaded CI host.
constexpr auto k_start_timeout = std::chrono::seconds(20);
constexpr auto k_stop_timeout = std::chrono::seconds(10);
constexpr auto k_poll_interval = std::chrono::milliseconds(20);

bool reap(pid_t pid, bool wait) {
  int status = 0;
  return ::waitpid(pid, &status, wait ? 0 : WNOHANG) == pid;
}

}  // namespace

RedisServer::RedisServer(const std::string& executable, const std::string& directory)
    : m_socket(directory + "/redis.sock"), m_log(directory + "/redis.log") {
  // Only the Unix socket (port 0 turns TCP off), so both servers are reached over the same
  // transport; no RDB snapshots or AOF, so the figures measure serving, not persistence.
  const std::vector<std::string> args{executable, "--port", "0",      "--unixsocket", m_socket, "--unixsocketperm",
                                      "700",      "--save", "",       "--appendonly", "no",     "--daemonize",
                                      "no",       "--dir",  directory};
  m_pid = ::fork();
  if (m_pid < 0) throw std::runtime_error("fork failed while starting redis-server");
  if (m_pid == 0) {
    const int out = ::open(m_log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (out >= 0) {
      ::dup2(out, STDOUT_FILENO);
      ::dup2(out, STDERR_FILENO);
    }
    std::vector<char*> argv;
    for (const auto& arg : args) argv.push_back(const_cast<char*>(arg.c_str()));
    argv.push_back(nullptr);
    ::execvp(argv[0], argv.data());
    const std::string failed = "cannot execute " + executable + ": " + std::strerror(errno) + "\n";
    [[maybe_unused]] const auto written = ::write(STDERR_FILENO, failed.data(), failed.size());
    ::_exit(127);
  }

  const auto deadline = Clock::now() + k_start_timeout;
  while (Clock::now() < deadline) {
    if (reap(m_pid, false)) {
      m_pid = -1;
      throw std::runtime_error("redis-server (" + executable + ") exited during start-up:\n" + log_tail(m_log));
    }
    if (auto connection = RedisConnection::connect(m_socket); connection && connection->ping()) return;
    std::this_thread::sleep_for(k_poll_interval);
  }
  stop();
  throw std::runtime_error("redis-server did not answer PING in time:\n" + log_tail(m_log));
}

RedisServer::~RedisServer() { stop(); }

void RedisServer::stop() {
  if (m_pid <= 0) return;
  ::kill(m_pid, SIGTERM);
  const auto deadline = Clock::now() + k_stop_timeout;
  while (Clock::now() < deadline) {
    if (reap(m_pid, false)) {
      m_pid = -1;
      return;
    }
    std::this_thread::sleep_for(k_poll_interval);
  }
  ::kill(m_pid, SIGKILL);
  reap(m_pid, true);
  m_pid = -1;
}

}  // namespace jitcache::bench
