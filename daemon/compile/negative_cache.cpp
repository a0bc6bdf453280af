#include <daemon/compile/negative_cache.hpp>

#include <memory>

namespace jitcache::daemon::compile {

NegativeCache::NegativeCache(std::chrono::milliseconds ttl, std::size_t max_entries)
    : m_ttl(ttl), m_max_entries(max_entries) {}

void NegativeCache::remember(const proto::Digest256& key_id, const CompileOutcome& outcome, Clock::time_point now) {
  if (m_ttl.count() <= 0 || m_max_entries == 0) return;
  auto remembered = std::make_shared<CompileOutcome>(outcome);
  remembered->from_negative_cache = true;
  m_entries.erase(key_id);
  make_room(now);
  m_entries.emplace(key_id, Entry{std::move(remembered), now + m_ttl});
}

CompileOutcomePtr NegativeCache::find(const proto::Digest256& key_id, Clock::time_point now) {
  const auto it = m_entries.find(key_id);
  if (it == m_entries.end()) return nullptr;
  if (it->second.expires <= now) {
    m_entries.erase(it);
    return nullptr;
  }
  return it->second.outcome;
}

void NegativeCache::make_room(Clock::time_point now) {
  if (m_entries.size() < m_max_entries) return;
  std::erase_if(m_entries, [now](const auto& entry) { return entry.second.expires <= now; });
  // Rationale: with one TTL for all, the entry that expires first is the oldest. A linear scan is
  // fine: this runs only when the cache is full, and it is small.
  while (m_entries.size() >= m_max_entries) {
    auto oldest = m_entries.begin();
    for (auto it = m_entries.begin(); it != m_entries.end(); ++it) {
      if (it->second.expires < oldest->second.expires) oldest = it;
    }
    m_entries.erase(oldest);
  }
}

bool worth_remembering(const CompileOutcome& outcome) {
  switch (outcome.kind) {
    case OutcomeKind::compile_error:
    case OutcomeKind::refused: return true;
    case OutcomeKind::worker_failed:
      return outcome.failure != WorkerFailure::spawn && outcome.failure != WorkerFailure::cancelled;
    case OutcomeKind::compiled:
    case OutcomeKind::busy: return false;
  }
  return false;
}

}  // namespace jitcache::daemon::compile
