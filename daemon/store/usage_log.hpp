// Hits and last-used times recorded by lookups and kept in memory until the store flushes them in
// one transaction (docs/entry-format.md "What the store does with them", Usage). A
// lookup therefore never writes to the database, and N hits on an entry cost one UPDATE.
//
// At most max_pending entries are kept between flushes: a hit on an entry not yet in a full log is
// dropped and counted (its hit is lost, and its last use is not moved, which makes it evicted a
// little earlier), so a flush that keeps failing (a full disk) holds a bounded amount of memory.
//
// Thread safety: every method may be called from any thread; one mutex guards the map. It is held
// only for a hash-map update, never across database work.
#pragma once

#include <cstdint>
#include <cstring>
#include <mutex>
#include <unordered_map>
#include <vector>

#include <proto/digest.hpp>

namespace jitcache::daemon::store {

// Rationale: 262 144 distinct entries hit within one usage flush interval (5 s by default) is more
// than a store serves but in a benchmark spreading hits over a million entries, and some 25 MiB
// (about 96 bytes per record) when a flush keeps failing; past it, hits go uncounted, nothing else.
inline constexpr std::size_t k_max_pending_usage = 262144;

struct UsageRecord {
  proto::Digest256 key_id;
  std::uint32_t namespace_id = 0;
  std::uint64_t hits = 0;
  std::int64_t last_used_at_ms = 0;
};

class UsageLog {
 public:
  explicit UsageLog(std::size_t max_pending = k_max_pending_usage) : m_max_pending(max_pending) {}

  void record(const proto::Digest256& key_id, std::uint32_t namespace_id, std::int64_t now_ms);

  // Everything recorded so far; the log is empty afterwards.
  std::vector<UsageRecord> take();

  // Puts records back after a flush failed, merged with whatever was recorded meanwhile, so a
  // failed flush loses no hits while the log has room.
  void restore(const std::vector<UsageRecord>& records);

  std::size_t pending() const;
  // Records of entries not yet in the log dropped because it was full, since construction.
  std::uint64_t dropped() const;

 private:
  struct Slot {
    proto::Digest256 key_id;
    std::uint32_t namespace_id;
    bool operator==(const Slot&) const = default;
  };
  struct SlotHash {
    std::size_t operator()(const Slot& slot) const {
      // Key ids are SHA-256 outputs: any 8 of their bytes are already uniformly distributed.
      std::size_t h = 0;
      std::memcpy(&h, slot.key_id.bytes.data(), sizeof h);
      return h ^ slot.namespace_id;
    }
  };
  struct Usage {
    std::uint64_t hits = 0;
    std::int64_t last_used_at_ms = 0;
  };

  void merge_locked(const Slot& slot, std::uint64_t hits, std::int64_t last_used_at_ms);

  const std::size_t m_max_pending;
  mutable std::mutex m_mutex;
  std::unordered_map<Slot, Usage, SlotHash> m_usage;
  std::uint64_t m_dropped = 0;
};

}  // namespace jitcache::daemon::store
