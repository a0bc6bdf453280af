// The daemon's miss ring: the last k_recent_misses LOOKUPs and COMPILEs that found no entry to
// serve, with their key fields, the caller's uid and the time, for `jitcache misses` and
// `jitcache explain` (a recent miss of the key asked about).
//
// Rationale: memory, bounded in total: 1024 records of ~1.2 KiB at most (the options dominate),
// about 1.2 MiB, whatever the traffic. Not per uid, because a uid's own misses are what it wants to
// see and the daemon's operator wants all of them; but once the ring is full a uid keeps at most a
// quarter of it (common/fair_share_ring.hpp), so a uid that misses on purpose, fast, cycles through
// its own quarter and cannot push the other uids' records out faster than they make new ones.
// A record of one uid is shown only to that uid and to trusted callers (the request handler
// decides: it names a key the other uid loads).
//
// Thread safety: every method may be called from any thread (one mutex, held for a push or a copy).
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <vector>

#include <common/fair_share_ring.hpp>
#include <proto/explain_messages.hpp>

namespace jitcache::daemon::stats {

inline constexpr std::size_t k_recent_misses = 1024;
inline constexpr std::size_t k_recent_misses_per_uid = k_recent_misses / 4;

class RecentMisses {
 public:
  RecentMisses() : m_ring(k_recent_misses, k_recent_misses_per_uid) {}

  void record(proto::MissRecord miss);
  // Newest first, at most `limit`: every uid's for `all_uids`, else only `uid`'s.
  std::vector<proto::MissRecord> newest(std::size_t limit, bool all_uids, std::uint32_t uid) const;
  // The records whose key id is `key_id` (misses by fast key have none), newest first, of every uid.
  std::vector<proto::MissRecord> of_key(const proto::Digest256& key_id) const;

 private:
  mutable std::mutex m_mutex;
  common::FairShareRing<proto::MissRecord> m_ring;
};

}  // namespace jitcache::daemon::stats
