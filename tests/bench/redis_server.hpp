// A private redis-server for the comparison: started from PATH on a Unix socket in a directory the
// caller owns, with persistence off, and stopped (SIGTERM, then SIGKILL) when the object dies.
// Thread safety: one owner.
#pragma once

#include <sys/types.h>

#include <string>

namespace jitcache::bench {

class RedisServer {
 public:
  // Starts `executable` and waits until it answers PING on its socket; throws std::runtime_error
  // (quoting its log) when it cannot be started.
  RedisServer(const std::string& executable, const std::string& directory);
  ~RedisServer();
  RedisServer(const RedisServer&) = delete;
  RedisServer& operator=(const RedisServer&) = delete;

  const std::string& socket_path() const { return m_socket; }
  pid_t pid() const { return m_pid; }

 private:
  void stop();

  std::string m_socket;
  std::string m_log;
  pid_t m_pid = -1;
};

}  // namespace jitcache::bench
