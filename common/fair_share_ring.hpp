// FairShareRing: the most recent records of something, at most `capacity` of them, where no one
// owner (a uid, a namespace) can push the others' records out once the ring is full. The daemon
// keeps its recent misses (daemon/stats/recent_misses.hpp) and evictions (daemon/store/
// recent_evictions.hpp) in one each, for `jitcache explain` and `jitcache misses`. It lives in
// common because both the stats and the store folder use it and neither owns it.
//
// Rationale: a ring is what "recent" means, and its memory is fixed whatever the traffic. Its
// nature is that the newest record pushes out the oldest, so a uid that makes misses on purpose
// could flush every other uid's records with `capacity` cheap LOOKUPs. Once the ring is full, an
// owner that already holds `share` records replaces its own oldest instead: it can keep at most
// `share` of the slots, and the others' records age out only as fast as the others make new ones
// (or as other owners under their share arrive). Below `share`, an owner pushes out the oldest
// record of anyone, as any ring does.
//
// Thread safety: none; the owner of the ring locks around it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <unordered_map>
#include <utility>
#include <vector>

namespace jitcache::common {

template <class T>
class FairShareRing {
 public:
  // capacity >= 1; share in 1..capacity (an owner's most slots once the ring is full).
  FairShareRing(std::size_t capacity, std::size_t share)
      : m_capacity(capacity == 0 ? 1 : capacity), m_share(share == 0 || share > m_capacity ? m_capacity : share) {}

  void push(std::uint32_t owner, T record) {
    if (m_slots.size() >= m_capacity) drop_one_for(owner);
    m_slots.push_back(Slot{owner, std::move(record)});
    ++m_held[owner];
  }

  // Newest first, at most `limit`, those `keep(owner, record)` accepts.
  template <class Keep>
  std::vector<T> newest(std::size_t limit, Keep&& keep) const {
    std::vector<T> out;
    for (auto it = m_slots.rbegin(); it != m_slots.rend() && out.size() < limit; ++it) {
      if (keep(it->owner, it->record)) out.push_back(it->record);
    }
    return out;
  }

  std::size_t size() const { return m_slots.size(); }
  std::size_t capacity() const { return m_capacity; }
  // Records `owner` holds now.
  std::size_t held_by(std::uint32_t owner) const {
    const auto it = m_held.find(owner);
    return it == m_held.end() ? 0 : it->second;
  }

 private:
  struct Slot {
    std::uint32_t owner = 0;
    T record;
  };

  void drop_one_for(std::uint32_t owner) {
    auto victim = m_slots.begin();
    if (held_by(owner) >= m_share) {
      // Linear, but only for an owner at its share of a full ring: the one filling it pays.
      while (victim->owner != owner) ++victim;
    }
    if (--m_held[victim->owner] == 0) m_held.erase(victim->owner);
    m_slots.erase(victim);
  }

  std::size_t m_capacity;
  std::size_t m_share;
  std::deque<Slot> m_slots;                               // oldest first
  std::unordered_map<std::uint32_t, std::size_t> m_held;  // records per owner; at most capacity keys
};

}  // namespace jitcache::common
