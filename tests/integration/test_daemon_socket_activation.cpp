// jitcached under systemd's service protocol, without a running systemd: a socket passed by
// socket activation (systemd-socket-activate, and a test-held socket across a restart), and the
// READY / WATCHDOG / STOPPING notifications on a NOTIFY_SOCKET the test listens on.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include <client/src/transport/daemon_client.hpp>
#include <tests/support/daemon_process.hpp>
#include <tests/support/temp_dir.hpp>

using jitcache::testing::DaemonProcess;
using jitcache::testing::TempDir;
namespace transport = jitcache::client::transport;

namespace {

using namespace std::chrono_literals;

bool ping(const std::string& socket_path, std::chrono::milliseconds timeout = 10s) {
  transport::ConnectOptions options;
  options.socket_path = socket_path;
  options.io_timeout = timeout;
  auto client = transport::DaemonClient::connect(options);
  return client && static_cast<bool>(client->ping());
}

bool wait_for_file(const std::string& path, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  struct stat st {};
  while (::stat(path.c_str(), &st) != 0) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(10ms);
  }
  return true;
}

int wait_exit(pid_t pid, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  int status = 0;
  while (::waitpid(pid, &status, WNOHANG) != pid) {
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      return -1;
    }
    std::this_thread::sleep_for(10ms);
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

std::vector<std::string> daemon_args(const TempDir& dir, const std::string& socket_path) {
  return {jitcache::testing::daemon_executable(),
          "--foreground",
          "--socket",
          socket_path,
          "--state-dir",
          dir.file("store"),
          "--compile=false",
          "--log-level",
          "info"};
}

pid_t spawn(const std::vector<std::string>& argv, const std::string& log_path, int listen_fd = -1,
            const std::vector<std::string>& env = {}) {
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    const int log = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0600);
    if (log >= 0) {
      ::dup2(log, 1);
      ::dup2(log, 2);
    }
    if (listen_fd >= 0) {
      // What systemd does: the socket as fd 3, LISTEN_FDS=1 and LISTEN_PID naming this process.
      if (listen_fd != 3) ::dup2(listen_fd, 3);
      ::setenv("LISTEN_FDS", "1", 1);
      ::setenv("LISTEN_PID", std::to_string(::getpid()).c_str(), 1);
    }
    for (const auto& assignment : env) ::putenv(const_cast<char*>(assignment.c_str()));
    std::vector<char*> raw;
    for (const auto& a : argv) raw.push_back(const_cast<char*>(a.c_str()));
    raw.push_back(nullptr);
    ::execv(raw[0], raw.data());
    ::_exit(127);
  }
  return pid;
}

int listening_socket(const std::string& path) {
  const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);  // inheritable: no CLOEXEC
  REQUIRE(fd >= 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::strncpy(address.sun_path, path.c_str(), sizeof(address.sun_path) - 1);
  REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0);
  REQUIRE(::listen(fd, 128) == 0);
  return fd;
}

// A NOTIFY_SOCKET: a datagram socket that collects what the daemon tells "systemd".
class NotifyListener {
 public:
  explicit NotifyListener(const std::string& path) : m_path(path) {
    m_fd = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    REQUIRE(m_fd >= 0);
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    std::strncpy(address.sun_path, path.c_str(), sizeof(address.sun_path) - 1);
    REQUIRE(::bind(m_fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0);
    timeval tv{0, 50'000};
    ::setsockopt(m_fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  }
  ~NotifyListener() { ::close(m_fd); }

  // Reads messages until one contains `needle` or `timeout` passes; returns all it read.
  std::string read_until(const std::string& needle, std::chrono::milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    std::string seen;
    while (std::chrono::steady_clock::now() < deadline) {
      char buffer[4096];
      const ssize_t n = ::recv(m_fd, buffer, sizeof(buffer), 0);
      if (n > 0) {
        seen.append(buffer, static_cast<std::size_t>(n));
        seen += '\n';
        if (seen.find(needle) != std::string::npos) break;
      }
    }
    return seen;
  }

 private:
  std::string m_path;
  int m_fd = -1;
};

std::size_t count_of(const std::string& text, const std::string& needle) {
  std::size_t count = 0;
  for (std::size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++count;
  return count;
}

}  // namespace

TEST_CASE("socket activation: under systemd-socket-activate the first connection starts the daemon and is served") {
  const std::string activate = "/usr/bin/systemd-socket-activate";
  struct stat st {};
  INFO("systemd-socket-activate is missing: scripts/install-deps installs the systemd package");
  REQUIRE(::stat(activate.c_str(), &st) == 0);
  TempDir dir;
  const std::string socket_path = dir.file("jitcached.sock");
  std::vector<std::string> argv{activate, "--listen", socket_path};
  for (const auto& a : daemon_args(dir, socket_path)) argv.push_back(a);
  const pid_t pid = spawn(argv, dir.file("daemon.log"));
  REQUIRE(wait_for_file(socket_path, 5s));
  // Nothing runs jitcached yet: systemd-socket-activate waits for the first connection.
  CHECK_FALSE(wait_for_file(dir.file("store/jitcache.db"), 200ms));
  CHECK(ping(socket_path));
  INFO(jitcache::testing::read_file(dir.file("daemon.log")));
  CHECK_THAT(jitcache::testing::read_file(dir.file("daemon.log")),
             Catch::Contains("listening on the socket systemd passed"));
  CHECK(ping(socket_path));
  ::kill(pid, SIGTERM);
  CHECK(wait_exit(pid, 20s) == 0);
}

TEST_CASE("socket activation: connections made while the daemon restarts wait in the backlog and are all served") {
  TempDir dir;
  const std::string socket_path = dir.file("jitcached.sock");
  const int listen_fd = listening_socket(socket_path);  // the test plays systemd: it keeps the socket
  pid_t first = spawn(daemon_args(dir, socket_path), dir.file("first.log"), listen_fd);
  REQUIRE(ping(socket_path));

  std::atomic<bool> stop{false};
  std::atomic<int> served{0};
  std::atomic<int> failed{0};
  std::vector<std::thread> clients;
  for (int i = 0; i < 4; ++i) {
    clients.emplace_back([&] {
      while (!stop.load()) {
        if (ping(socket_path, 30s)) {
          ++served;
        } else {
          ++failed;
        }
      }
    });
  }
  std::this_thread::sleep_for(200ms);
  const int before_restart = served.load();
  ::kill(first, SIGTERM);
  CHECK(wait_exit(first, 20s) == 0);
  // Down for a while: the clients' connections queue in the socket's backlog.
  std::this_thread::sleep_for(300ms);
  const pid_t second = spawn(daemon_args(dir, socket_path), dir.file("second.log"), listen_fd);
  std::this_thread::sleep_for(500ms);
  stop = true;
  for (auto& t : clients) t.join();
  INFO(jitcache::testing::read_file(dir.file("first.log")) + jitcache::testing::read_file(dir.file("second.log")));
  CHECK(before_restart > 0);
  CHECK(served.load() > before_restart);
  CHECK(failed.load() == 0);
  ::kill(second, SIGTERM);
  CHECK(wait_exit(second, 20s) == 0);
  ::close(listen_fd);
}

TEST_CASE("socket activation: READY once serving, WATCHDOG while serving, STOPPING on drain") {
  TempDir dir;
  const std::string notify_path = dir.file("notify");
  NotifyListener notify(notify_path);
  const std::string socket_path = dir.file("jitcached.sock");
  const pid_t pid = spawn(daemon_args(dir, socket_path), dir.file("daemon.log"), -1,
                          {"NOTIFY_SOCKET=" + notify_path, "WATCHDOG_USEC=200000"});
  const std::string ready = notify.read_until("READY=1", 10s);
  CHECK_THAT(ready, Catch::Contains("READY=1") && Catch::Contains("STATUS=serving " + socket_path));
  CHECK(ping(socket_path));  // READY came after the socket and the store were usable
  // 200 ms interval: a ping every 100 ms while the workers answer.
  const std::string watchdog = notify.read_until("never", 700ms);
  CHECK(count_of(watchdog, "WATCHDOG=1") >= 4);
  ::kill(pid, SIGTERM);
  CHECK_THAT(notify.read_until("STOPPING=1", 10s), Catch::Contains("STOPPING=1"));
  CHECK(wait_exit(pid, 20s) == 0);
}
