// How many failure reports (REPORT_FAILURE) each untrusted uid may send: a token bucket per uid
// holding `per_minute` tokens, refilled at `per_minute` a minute. A report over the rate is answered
// `busy` and changes nothing (docs/security.md "Limits").
//
// Rationale: a report is a write on the one writer thread, and a shared entry's reports decide its
// quarantine; a flood from one tenant must neither hold up everyone's PUTs nor be cheap to repeat.
// A client sends a report only after a load failed, a handful per run at most, so a minute's worth
// as burst never slows an honest one.
//
// Thread safety: allow() may be called from any thread.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <mutex>
#include <unordered_map>

namespace jitcache::daemon::policy {

class ReportRateLimiter {
 public:
  using Clock = std::chrono::steady_clock;

  explicit ReportRateLimiter(unsigned per_minute) : m_per_minute(per_minute) {}  // 0: unlimited

  // Takes a token for `uid` if it has one.
  bool allow(uid_t uid, Clock::time_point now = Clock::now());
  unsigned per_minute() const { return m_per_minute; }

 private:
  struct Bucket {
    double tokens = 0;
    Clock::time_point refilled;
  };

  const unsigned m_per_minute;
  std::mutex m_mutex;
  std::unordered_map<uid_t, Bucket> m_buckets;
};

}  // namespace jitcache::daemon::policy
