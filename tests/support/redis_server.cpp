#include <tests/support/redis_server.hpp>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

#include <tests/support/child_process.hpp>
#include <tests/support/loopback_port.hpp>
#include <tests/support/temp_dir.hpp>

namespace jitcache::testing {

namespace {

using Clock = std::chrono::steady_clock;

// Rationale: redis-server starts in milliseconds; the bound matters only on a loaded CI host.
constexpr auto k_start_timeout = std::chrono::seconds(20);
constexpr auto k_poll_interval = std::chrono::milliseconds(10);
constexpr auto k_cli_timeout = std::chrono::seconds(60);
constexpr int k_port_attempts = 8;

bool reaped(pid_t pid, bool wait) {
  int status = 0;
  return ::waitpid(pid, &status, wait ? 0 : WNOHANG) == pid;
}

// One PING over a fresh socket: any reply (+PONG, or -NOAUTH from a server with a password) means
// it serves.
bool answers_ping(std::uint16_t port, const std::string& socket_path) {
  int fd = -1;
  if (!socket_path.empty()) {
    fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    if (socket_path.size() >= sizeof(address.sun_path)) return false;
    std::memcpy(address.sun_path, socket_path.c_str(), socket_path.size() + 1);
    if (fd < 0 || ::connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof(address)) != 0) {
      if (fd >= 0) ::close(fd);
      return false;
    }
  } else {
    fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    address.sin_port = htons(port);
    if (fd < 0 || ::connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof(address)) != 0) {
      if (fd >= 0) ::close(fd);
      return false;
    }
  }
  constexpr std::string_view k_ping = "PING\r\n";
  bool answered = false;
  if (::send(fd, k_ping.data(), k_ping.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(k_ping.size())) {
    pollfd ready{fd, POLLIN, 0};
    char reply = 0;
    answered = ::poll(&ready, 1, 500) == 1 && ::recv(fd, &reply, 1, 0) == 1 && (reply == '+' || reply == '-');
  }
  ::close(fd);
  return answered;
}

std::string quoted(const std::string& text) {
  std::string out = "\"";
  for (const char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

}  // namespace

std::string find_program(const std::string& name, const std::string& package) {
  if (name.find('/') != std::string::npos) return name;
  const char* path = std::getenv("PATH");
  std::istringstream directories(path != nullptr ? path : "/usr/local/bin:/usr/bin:/bin");
  for (std::string directory; std::getline(directories, directory, ':');) {
    const std::string candidate = (directory.empty() ? "." : directory) + "/" + name;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  throw std::runtime_error(name + " is not in PATH (Debian package " + package + ", scripts/install-deps)");
}

std::string run_redis_cli(const std::vector<std::string>& args) {
  std::vector<std::string> argv{find_program("redis-cli", "redis-tools")};
  argv.insert(argv.end(), args.begin(), args.end());
  const auto result = run_child_captured(argv, {}, k_cli_timeout);
  if (result.status != 0) {
    std::string line;
    for (const auto& arg : args) line += " " + arg;
    throw std::runtime_error("redis-cli" + line + " failed (status " + std::to_string(result.status) +
                             "): " + result.errors + result.output);
  }
  return result.output;
}

RedisServer::RedisServer(RedisServerOptions options) : m_options(std::move(options)) {
  if (m_options.directory.empty()) {
    m_own_directory = std::make_unique<TempDir>("jitcache-redis");
    m_directory = m_own_directory->path();
  } else {
    m_directory = m_options.directory;
  }
  m_options.executable = find_program(m_options.executable, "redis-server");
  m_config = m_directory + "/redis.conf";
  m_log = m_directory + "/redis.log";
  if (m_options.unix_socket_only) m_socket = m_directory + "/redis.sock";
  for (int attempt = 0; attempt < k_port_attempts; ++attempt) {
    // A cluster node also listens on its bus port, P + 10000, which Redis wants <= 65535.
    if (!m_options.unix_socket_only)
      m_port = m_options.cluster_enabled ? free_loopback_port_with(10000) : free_loopback_port();
    write_config();
    if (launch()) return;
  }
  throw std::runtime_error("redis-server: every free port tried was taken before it could bind it:\n" + log_tail());
}

RedisServer::~RedisServer() { kill(); }

std::string RedisServer::address() const { return host() + ":" + std::to_string(m_port); }

std::string RedisServer::url() const { return "redis://" + address(); }

void RedisServer::write_config() const {
  std::ostringstream config;
  // Rationale: no RDB snapshots or AOF, so nothing but the test's own traffic costs time, and a
  // killed server comes back empty.
  config << "bind 127.0.0.1\n"
         << "port " << m_port << "\n"
         << "dir " << quoted(m_directory) << "\n"
         << "save \"\"\n"
         << "appendonly no\n"
         << "daemonize no\n"
         << "logfile \"\"\n";
  if (!m_socket.empty()) config << "unixsocket " << quoted(m_socket) << "\nunixsocketperm 700\n";
  if (!m_options.password.empty()) config << "requirepass " << quoted(m_options.password) << "\n";
  for (const auto& user : m_options.acl_users) config << "user " << user << "\n";
  if (m_options.cluster_enabled) {
    // Rationale: a node paused by a test is marked failing after 5 s rather than the default 15 s,
    // yet not during a short pause.
    config << "cluster-enabled yes\ncluster-config-file nodes.conf\ncluster-node-timeout 5000\n";
  }
  for (const auto& line : m_options.extra_config) config << line << "\n";
  write_file(m_config, config.str());
}

bool RedisServer::launch() {
  // Everything the child needs is made before fork: a child of a multi-threaded test may only call
  // async-signal-safe functions.
  std::vector<std::string> args{m_options.executable, m_config};
  std::vector<char*> argv;
  for (auto& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);
  const int log_fd = ::open(m_log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (log_fd < 0) throw std::runtime_error("cannot open " + m_log);
  const std::size_t log_start = static_cast<std::size_t>(::lseek(log_fd, 0, SEEK_END));

  const pid_t parent = ::getpid();
  m_pid = ::fork();
  if (m_pid < 0) {
    ::close(log_fd);
    throw std::runtime_error("fork failed while starting redis-server");
  }
  if (m_pid == 0) {
    ::dup2(log_fd, STDOUT_FILENO);
    ::dup2(log_fd, STDERR_FILENO);
    // The test's own sockets (a client's connection, a garbage server's) stay with the test: a
    // server holding a copy would keep a connection open that the test closed.
    ::close_range(3, ~0U, 0);
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);  // the test ended before prctl
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  ::close(log_fd);

  const auto deadline = Clock::now() + k_start_timeout;
  while (Clock::now() < deadline) {
    if (reaped(m_pid, false)) {
      m_pid = -1;
      std::string log;
      try {
        log = read_file(m_log).substr(log_start);
      } catch (const std::exception&) {
      }
      if (log.find("Address already in use") != std::string::npos && !m_options.unix_socket_only) return false;
      throw std::runtime_error("redis-server exited during start-up:\n" + log_tail());
    }
    if (answers_ping(m_port, m_socket)) return true;
    std::this_thread::sleep_for(k_poll_interval);
  }
  kill();
  throw std::runtime_error("redis-server did not answer PING in time:\n" + log_tail());
}

void RedisServer::start() {
  if (running()) return;
  if (!launch())
    throw std::runtime_error("redis-server: port " + std::to_string(m_port) + " was taken:\n" + log_tail());
}

void RedisServer::pause() {
  if (running()) ::kill(m_pid, SIGSTOP);
}

void RedisServer::resume() {
  if (running()) ::kill(m_pid, SIGCONT);
}

void RedisServer::kill() {
  if (!running()) return;
  ::kill(m_pid, SIGKILL);  // also ends a stopped process
  reaped(m_pid, true);
  m_pid = -1;
}

std::string RedisServer::cli(const std::vector<std::string>& args) const {
  std::vector<std::string> argv;
  if (m_options.unix_socket_only) {
    argv = {"-s", m_socket};
  } else {
    argv = {"-h", host(), "-p", std::to_string(m_port)};
  }
  if (!m_options.password.empty()) argv.insert(argv.end(), {"-a", m_options.password, "--no-auth-warning"});
  argv.insert(argv.end(), args.begin(), args.end());
  return run_redis_cli(argv);
}

std::string RedisServer::log_tail() const {
  constexpr std::size_t k_tail = 2000;
  std::string log;
  try {
    log = read_file(m_log);
  } catch (const std::exception&) {
    return "(no log at " + m_log + ")";
  }
  if (log.size() <= k_tail) return log;
  const auto start = log.find('\n', log.size() - k_tail);
  return log.substr(start == std::string::npos ? log.size() - k_tail : start + 1);
}

}  // namespace jitcache::testing
