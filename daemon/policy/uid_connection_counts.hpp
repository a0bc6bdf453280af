// Connections open per uid, against max_connections_per_uid (docs/security.md "Limits"): one
// tenant opening connections until max_connections is reached would lock every other tenant out,
// so each uid gets a share. The server takes a slot when it accepts a connection and gives it back
// when the connection ends; a connection over the limit is answered `busy` and closed.
// Thread safety: every method may be called from any thread.
#pragma once

#include <sys/types.h>

#include <mutex>
#include <unordered_map>

namespace jitcache::daemon::policy {

class UidConnectionCounts {
 public:
  explicit UidConnectionCounts(unsigned limit_per_uid) : m_limit(limit_per_uid) {}  // 0: no limit

  // false: `uid` already has the limit's number of connections.
  bool try_acquire(uid_t uid);
  void release(uid_t uid);
  unsigned open(uid_t uid) const;
  unsigned limit() const { return m_limit; }

 private:
  const unsigned m_limit;
  mutable std::mutex m_mutex;
  std::unordered_map<uid_t, unsigned> m_open;
};

}  // namespace jitcache::daemon::policy
