#include <daemon/store/usage_log.hpp>

#include <algorithm>

namespace jitcache::daemon::store {

void UsageLog::merge_locked(const Slot& slot, std::uint64_t hits, std::int64_t last_used_at_ms) {
  auto it = m_usage.find(slot);
  if (it == m_usage.end()) {
    if (m_usage.size() >= m_max_pending) {
      ++m_dropped;
      return;
    }
    it = m_usage.emplace(slot, Usage{}).first;
  }
  Usage& usage = it->second;
  usage.hits += hits;
  usage.last_used_at_ms = std::max(usage.last_used_at_ms, last_used_at_ms);
}

void UsageLog::record(const proto::Digest256& key_id, std::uint32_t namespace_id, std::int64_t now_ms) {
  std::lock_guard lock(m_mutex);
  merge_locked(Slot{key_id, namespace_id}, 1, now_ms);
}

std::vector<UsageRecord> UsageLog::take() {
  std::unordered_map<Slot, Usage, SlotHash> taken;
  {
    std::lock_guard lock(m_mutex);
    taken.swap(m_usage);
  }
  std::vector<UsageRecord> records;
  records.reserve(taken.size());
  for (const auto& [slot, usage] : taken) {
    records.push_back(UsageRecord{slot.key_id, slot.namespace_id, usage.hits, usage.last_used_at_ms});
  }
  return records;
}

void UsageLog::restore(const std::vector<UsageRecord>& records) {
  std::lock_guard lock(m_mutex);
  for (const auto& record : records) {
    merge_locked(Slot{record.key_id, record.namespace_id}, record.hits, record.last_used_at_ms);
  }
}

std::size_t UsageLog::pending() const {
  std::lock_guard lock(m_mutex);
  return m_usage.size();
}

std::uint64_t UsageLog::dropped() const {
  std::lock_guard lock(m_mutex);
  return m_dropped;
}

}  // namespace jitcache::daemon::store
