// An exclusive flock held for the daemon's lifetime: a second jitcached on the same state dir or
// socket refuses to start with a message naming the holder. The kernel drops the lock when the
// process dies, so a crash leaves nothing stale behind (unlike a pid file or a leftover socket).
//
// The state directory is locked twice: the directory itself (opened O_RDONLY|O_DIRECTORY) and a
// lock file in it that holds the pid. A lock file alone is missed by a second daemon once someone
// deletes it (after `rm jitcached.lock` a second daemon would run on the live store); the
// directory cannot be deleted while it holds the store, and a new one is a new, empty state.
// Rationale: both, not only the directory: the file keeps the pid for the refusal and for operators
// (`kill $(cat jitcached.lock)`), and stays what older versions lock, so an older and a newer daemon
// still exclude each other.
//
// Thread safety: one owner; move-only.
#pragma once

#include <string>

#include <common/result.hpp>

namespace jitcache::daemon::unix_socket {

class InstanceLock {
 public:
  // `what` names the resource in the refusal ("state directory /var/lib/jitcache").
  static common::Result<InstanceLock> acquire(const std::string& lock_path, const std::string& what);
  // The directory itself, then `directory`/`lock_file` as acquire() does. A file system where a
  // directory cannot be flocked (some network file systems) keeps the file lock alone, with a
  // warning.
  static common::Result<InstanceLock> acquire_directory(const std::string& directory, const std::string& lock_file,
                                                        const std::string& what);

  InstanceLock(InstanceLock&& other) noexcept;
  InstanceLock& operator=(InstanceLock&&) = delete;
  InstanceLock(const InstanceLock&) = delete;
  ~InstanceLock();

  // Records the current pid (call again after daemonizing, when the pid changes).
  void write_pid();

 private:
  explicit InstanceLock(int fd, int directory_fd = -1) : m_fd(fd), m_directory_fd(directory_fd) {}
  int m_fd = -1;
  int m_directory_fd = -1;
};

}  // namespace jitcache::daemon::unix_socket
