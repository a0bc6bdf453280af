// Failed compiles remembered for a short time, so that N processes asking for one PTX that does not
// compile get the compiler's log N times but run the compiler once.
//
// Rationale for a TTL rather than "forever": a failure can depend on the host (a worker killed for
// memory while the machine was loaded), and an operator who fixes a limit should not have to
// restart the daemon; a minute stops a stampede without hiding a fix for long.
// Thread safety: none; the compile service calls it under its lock.
#pragma once

#include <chrono>
#include <cstddef>
#include <map>

#include <proto/digest.hpp>

#include <daemon/compile/compile_outcome.hpp>

namespace jitcache::daemon::compile {

class NegativeCache {
 public:
  using Clock = std::chrono::steady_clock;

  // ttl 0 disables the cache. At most max_entries are kept; past that the oldest goes first.
  NegativeCache(std::chrono::milliseconds ttl, std::size_t max_entries);

  // Remembers `outcome` (a failure) until now + ttl, marked from_negative_cache.
  void remember(const proto::Digest256& key_id, const CompileOutcome& outcome, Clock::time_point now);
  // The remembered outcome, or null when there is none or it has expired (and is then dropped).
  CompileOutcomePtr find(const proto::Digest256& key_id, Clock::time_point now);

  std::size_t size() const { return m_entries.size(); }

 private:
  struct Entry {
    CompileOutcomePtr outcome;
    Clock::time_point expires;
  };
  void make_room(Clock::time_point now);

  std::chrono::milliseconds m_ttl;
  std::size_t m_max_entries;
  std::map<proto::Digest256, Entry> m_entries;
};

// Whether an outcome says something about the request (remember it) rather than about the daemon's
// state at the time (a worker it could not start, a compile it abandoned while stopping).
bool worth_remembering(const CompileOutcome& outcome);

}  // namespace jitcache::daemon::compile
