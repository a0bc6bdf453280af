// An exclusive flock on a file, held for the daemon's lifetime: a second jitcached on the same state
// dir or socket refuses to start with a message naming the holder. The kernel drops the lock when the
// process dies, so a crash leaves nothing stale behind (unlike a pid file or a leftover socket).
// Thread safety: one owner; move-only.
#pragma once

#include <string>

#include <jitcache/proto/result.hpp>

namespace jitcache::daemon::server {

class InstanceLock {
 public:
  // `what` names the resource in the refusal ("state directory /var/lib/jitcache").
  static proto::Result<InstanceLock> acquire(const std::string& lock_path, const std::string& what);

  InstanceLock(InstanceLock&& other) noexcept;
  InstanceLock& operator=(InstanceLock&&) = delete;
  InstanceLock(const InstanceLock&) = delete;
  ~InstanceLock();

  // Records the current pid (call again after daemonizing, when the pid changes).
  void write_pid();

 private:
  explicit InstanceLock(int fd) : m_fd(fd) {}
  int m_fd = -1;
};

}  // namespace jitcache::daemon::server
