// RejectionLog: logs a remote's rejected entry once per key, so a remote full of tampered records
// (or one bad record asked for by every load) cannot flood the log. Bounded: past k_max_keys
// remembered keys it forgets them all and starts again (a key may then be logged a second time).
// Thread safety: every method may be called from any thread.
#pragma once

#include <cstddef>
#include <mutex>
#include <set>

#include <proto/digest.hpp>

namespace jitcache::daemon::remote {

class RejectionLog {
 public:
  static constexpr std::size_t k_max_keys = 4096;
  // True the first time `key` is seen: log it.
  bool first_time(const proto::Digest256& key);

 private:
  std::mutex m_mutex;
  std::set<proto::Digest256> m_seen;
};

}  // namespace jitcache::daemon::remote
