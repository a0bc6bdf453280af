// A private redis-server for tests and benchmarks: started from PATH (or a given executable) in a
// directory of its own, on a free port of 127.0.0.1 or only on a Unix socket, with persistence off
// (no RDB snapshots, no AOF), optionally with a password and ACL users. A test can pause it
// (SIGSTOP: the kernel still accepts connections, nothing answers), resume it, kill it (connections
// are refused) and start it again on the same port, and run redis-cli against it. The process is
// killed when the object dies, also when a test fails, and by the kernel when the thread that
// started it ends (PR_SET_PDEATHSIG: a crashed test leaves no server behind; start servers from a
// thread that lives as long as they should). RedisCluster (redis_cluster.hpp) is made of these. Thread safety: one
// owner calls the methods; other threads may use the server through sockets meanwhile.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace jitcache::testing {

class TempDir;

struct RedisServerOptions {
  std::string executable = "redis-server";  // a path, or a name looked up in PATH
  std::string password;                     // requirepass (the default user's password) when not empty
  // ACL users, one per entry, as redis.conf's "user" lines take them after the word "user":
  // "reader on >pw ~jitcache:* +get +exists +ping".
  std::vector<std::string> acl_users;
  bool cluster_enabled = false;           // a Redis Cluster node (RedisCluster joins them)
  bool unix_socket_only = false;          // TCP off; clients use socket_path()
  std::string directory;                  // where its files go; empty: a temporary directory of its own
  std::vector<std::string> extra_config;  // more redis.conf lines, e.g. "maxmemory 10mb"
};

class RedisServer {
 public:
  // Starts the server and waits until it answers on its socket; throws std::runtime_error, quoting
  // its log, when it cannot be started. A port taken by someone else in the meantime is retried.
  explicit RedisServer(RedisServerOptions options = {});
  ~RedisServer();
  RedisServer(const RedisServer&) = delete;
  RedisServer& operator=(const RedisServer&) = delete;

  std::string host() const { return "127.0.0.1"; }
  std::uint16_t port() const { return m_port; }                // 0 with unix_socket_only
  std::string address() const;                                 // "127.0.0.1:<port>"
  std::string url() const;                                     // "redis://127.0.0.1:<port>"
  const std::string& socket_path() const { return m_socket; }  // with unix_socket_only
  const std::string& directory() const { return m_directory; }
  const RedisServerOptions& options() const { return m_options; }
  pid_t pid() const { return m_pid; }  // -1 when killed
  bool running() const { return m_pid > 0; }

  void pause();   // SIGSTOP
  void resume();  // SIGCONT
  void kill();    // SIGKILL, and waits for the process to be gone
  // Starts it again after kill(), on the same port with the same files (a cluster node keeps its
  // identity: nodes.conf is in the directory); throws as the constructor does.
  void start();

  // Runs redis-cli against this server (with the password) and returns what it printed; throws when
  // it does not run or exits non-zero. A Redis error reply is printed, not thrown.
  std::string cli(const std::vector<std::string>& args) const;
  // The end of the server's log, for a failing test's message.
  std::string log_tail() const;

 private:
  void write_config() const;
  bool launch();  // false: the port was taken, pick another

  RedisServerOptions m_options;
  std::unique_ptr<TempDir> m_own_directory;
  std::string m_directory;
  std::string m_socket;
  std::string m_config;
  std::string m_log;
  std::uint16_t m_port = 0;
  pid_t m_pid = -1;
};

// `name` looked up in PATH (a name with a '/' is returned as it is); throws std::runtime_error
// naming the Debian package to install when it is not there.
std::string find_program(const std::string& name, const std::string& package);

// redis-cli with `args`, the first of which say which server (-p PORT, -a ...); throws as
// RedisServer::cli does.
std::string run_redis_cli(const std::vector<std::string>& args);

}  // namespace jitcache::testing
