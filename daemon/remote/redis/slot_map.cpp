#include <daemon/remote/redis/slot_map.hpp>

#include <algorithm>
#include <mutex>

namespace jitcache::daemon::remote {

RedisNode* SlotMap::owner(int slot) const {
  std::shared_lock lock(m_mutex);
  return m_owners[static_cast<std::size_t>(slot)];
}

void SlotMap::assign(int slot, RedisNode* node) {
  std::unique_lock lock(m_mutex);
  m_owners[static_cast<std::size_t>(slot)] = node;
}

void SlotMap::replace(const Table& owners) {
  std::unique_lock lock(m_mutex);
  m_owners = owners;
  ++m_epoch;
}

std::vector<RedisNode*> SlotMap::masters() const {
  std::vector<RedisNode*> nodes;
  std::shared_lock lock(m_mutex);
  for (RedisNode* node : m_owners) {
    if (node != nullptr && std::find(nodes.begin(), nodes.end(), node) == nodes.end()) nodes.push_back(node);
  }
  return nodes;
}

std::uint64_t SlotMap::epoch() const {
  std::shared_lock lock(m_mutex);
  return m_epoch;
}

}  // namespace jitcache::daemon::remote
