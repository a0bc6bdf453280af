// Which node serves each of a Redis Cluster's 16384 hash slots, as the backend last learned it:
// replaced whole from CLUSTER SLOTS, and one slot at a time from a MOVED redirection (which is
// the server's word on that slot, newer than any map). The epoch counts the whole replacements,
// so threads that met the same MOVED refresh the map once, not once each.
// Thread safety: every method may be called from any number of threads.
#pragma once

#include <array>
#include <cstdint>
#include <shared_mutex>
#include <vector>

#include <daemon/remote/redis/hash_slot.hpp>

namespace jitcache::daemon::remote {

class RedisNode;

class SlotMap {
 public:
  using Table = std::array<RedisNode*, k_hash_slot_count>;

  SlotMap() { m_owners.fill(nullptr); }

  // nullptr: no node is known for it.
  RedisNode* owner(int slot) const;
  void assign(int slot, RedisNode* node);
  void replace(const Table& owners);

  // The distinct nodes the map names, in slot order: the Cluster's masters.
  std::vector<RedisNode*> masters() const;
  // 0 until the first replace().
  std::uint64_t epoch() const;

 private:
  mutable std::shared_mutex m_mutex;
  Table m_owners;             // guarded by m_mutex
  std::uint64_t m_epoch = 0;  // guarded by m_mutex
};

}  // namespace jitcache::daemon::remote
