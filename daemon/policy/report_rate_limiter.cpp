#include <daemon/policy/report_rate_limiter.hpp>

#include <algorithm>

namespace jitcache::daemon::policy {

namespace {

// Buckets of uids that have not reported for a while are full again and carry no state; past this
// many, those are dropped so the map stays as small as the set of recent reporters.
constexpr std::size_t k_prune_above = 4096;

}  // namespace

bool ReportRateLimiter::allow(uid_t uid, Clock::time_point now) {
  if (m_per_minute == 0) return true;
  const double capacity = m_per_minute;
  const double per_second = capacity / 60.0;
  std::lock_guard lock(m_mutex);
  if (m_buckets.size() > k_prune_above) {
    std::erase_if(m_buckets, [&](const auto& item) {
      const double seconds = std::chrono::duration<double>(now - item.second.refilled).count();
      return item.second.tokens + seconds * per_second >= capacity;
    });
  }
  auto [it, fresh] = m_buckets.try_emplace(uid, Bucket{capacity, now});
  Bucket& bucket = it->second;
  if (!fresh) {
    const double seconds = std::max(0.0, std::chrono::duration<double>(now - bucket.refilled).count());
    bucket.tokens = std::min(capacity, bucket.tokens + seconds * per_second);
    bucket.refilled = now;
  }
  if (bucket.tokens < 1.0) return false;
  bucket.tokens -= 1.0;
  return true;
}

}  // namespace jitcache::daemon::policy
