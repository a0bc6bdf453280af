#include <daemon/policy/request_bytes_budget.hpp>

namespace jitcache::daemon::policy {

RequestBytesBudget::Refusal RequestBytesBudget::try_reserve(uid_t uid, std::uint64_t bytes) {
  std::lock_guard lock(m_mutex);
  auto found = m_by_uid.find(uid);
  const std::uint64_t held = found == m_by_uid.end() ? 0 : found->second;
  // Written as subtractions so that no sum of a declared length can overflow.
  if (m_per_uid != 0 && (bytes > m_per_uid || held > m_per_uid - bytes)) return Refusal::per_uid;
  if (m_total_limit != 0 && (bytes > m_total_limit || m_total > m_total_limit - bytes)) return Refusal::total;
  if (found == m_by_uid.end()) found = m_by_uid.emplace(uid, 0).first;
  found->second += bytes;
  m_total += bytes;
  return Refusal::none;
}

void RequestBytesBudget::release(uid_t uid, std::uint64_t bytes) {
  std::lock_guard lock(m_mutex);
  auto found = m_by_uid.find(uid);
  if (found == m_by_uid.end()) return;
  const std::uint64_t given = bytes < found->second ? bytes : found->second;
  m_total -= given;
  found->second -= given;
  if (found->second == 0) m_by_uid.erase(found);
}

RequestBytesBudget::Hold& RequestBytesBudget::Hold::operator=(Hold&& other) noexcept {
  if (this != &other) {
    reset();
    m_budget = std::exchange(other.m_budget, nullptr);
    m_uid = other.m_uid;
    m_bytes = std::exchange(other.m_bytes, 0);
  }
  return *this;
}

void RequestBytesBudget::Hold::reset() {
  if (m_budget != nullptr && m_bytes != 0) m_budget->release(m_uid, m_bytes);
  m_budget = nullptr;
  m_bytes = 0;
}

std::uint64_t RequestBytesBudget::reserved(uid_t uid) const {
  std::lock_guard lock(m_mutex);
  auto found = m_by_uid.find(uid);
  return found == m_by_uid.end() ? 0 : found->second;
}

std::uint64_t RequestBytesBudget::reserved_total() const {
  std::lock_guard lock(m_mutex);
  return m_total;
}

}  // namespace jitcache::daemon::policy
