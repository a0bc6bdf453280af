// Hits and last-used times recorded by lookups and kept in memory until the store flushes them in
// one transaction (design §5: "usage updates batched so hits do not turn into writes"). A
// lookup therefore never writes to the database, and N hits on an entry cost one UPDATE.
//
// Thread safety: every method may be called from any thread; one mutex guards the map. It is held
// only for a hash-map update, never across database work.
#pragma once

#include <cstdint>
#include <cstring>
#include <mutex>
#include <unordered_map>
#include <vector>

#include <jitcache/proto/digest.hpp>

namespace jitcache::daemon::store {

struct UsageRecord {
  proto::Digest256 key_id;
  std::uint32_t namespace_id = 0;
  std::uint64_t hits = 0;
  std::int64_t last_used_at_ms = 0;
};

class UsageLog {
 public:
  void record(const proto::Digest256& key_id, std::uint32_t namespace_id, std::int64_t now_ms);

  // Everything recorded so far; the log is empty afterwards.
  std::vector<UsageRecord> take();

  // Puts records back after a flush failed, merged with whatever was recorded meanwhile, so a
  // failed flush loses no hits.
  void restore(const std::vector<UsageRecord>& records);

  std::size_t pending() const;

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

  mutable std::mutex m_mutex;
  std::unordered_map<Slot, Usage, SlotHash> m_usage;
};

}  // namespace jitcache::daemon::store
