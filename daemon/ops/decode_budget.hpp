// The bytes of bundle images an untrusted uid may have the daemon decode (zstd) and check, per hour
// (bundle_decoded_per_uid): a bundle of small frames that decode to huge images costs the daemon
// CPU and memory bandwidth out of all proportion to its size, and the per-import bound
// (bundle_max_decoded) alone would let one uid import such bundles one after another.
//
// Rationale: an hour's window, reset whole when it ends (not sliding): simple, and the bound is what
// matters — in any hour a uid gets at most twice its allowance. Trusted callers are not counted.
// Thread safety: charge() from any thread.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>

#include <common/result.hpp>

namespace jitcache::daemon::ops {

class DecodeBudget {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr std::chrono::seconds k_window{3600};

  explicit DecodeBudget(std::uint64_t per_uid_per_hour) : m_limit(per_uid_per_hour) {}

  // Adds `bytes` to `uid`'s hour; too_large (saying when the hour ends) when that passes the limit,
  // and then nothing is added. A limit of 0: no limit.
  common::Result<void> charge(uid_t uid, std::uint64_t bytes, Clock::time_point now = Clock::now());

 private:
  struct Window {
    Clock::time_point start;
    std::uint64_t bytes = 0;
  };
  std::uint64_t m_limit;
  std::mutex m_mutex;
  std::map<uid_t, Window> m_windows;
};

}  // namespace jitcache::daemon::ops
