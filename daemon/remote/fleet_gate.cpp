#include <daemon/remote/fleet_gate.hpp>

#include <time.h>

#include <algorithm>
#include <thread>

#include <spdlog/spdlog.h>

namespace jitcache::daemon::remote {

namespace {

using namespace std::chrono_literals;

// Rationale: a waiter's wait past the holder's upload is at most one poll interval, so the cap is
// what a cold start pays over one compile (docs/benchmarks.md "Fleet": with a 1 s cap, 8 hosts took
// 1.75x one 0.47 s compile); a poll is one GET per waiting host, so five a second cost nothing.
constexpr auto k_first_poll = 10ms;
constexpr auto k_longest_poll = 200ms;
// Rationale: how long a host that has seen no lease yet keeps asking a remote that does not answer
// (timeouts, an open breaker) before it compiles without the fleet. Each lease call already waits
// up to 1 s (RemoteTier::lease_call_timeout), which covers a Redis paused for a few hundred ms; a
// longer patience would make every cold compile behind a dead remote pay it
// (tests/integration/test_daemon_remote_faults_midrun.cpp bounds that cost).
constexpr auto k_unknown_patience = 1s;

std::int64_t unix_ms() {
  timespec now{};
  ::clock_gettime(CLOCK_REALTIME, &now);
  return static_cast<std::int64_t>(now.tv_sec) * 1000 + now.tv_nsec / 1'000'000;
}

// Sleeps until `until`, waking every few milliseconds to see `stop`.
void sleep_until(Clock::time_point until, const std::atomic<bool>& stop) {
  while (!stop.load(std::memory_order_relaxed)) {
    const auto now = Clock::now();
    if (now >= until) return;
    std::this_thread::sleep_for(std::min<Clock::duration>(until - now, 10ms));
  }
}

// Polls from k_first_poll, doubling up to k_longest_poll.
class Backoff {
 public:
  void sleep(Clock::time_point limit, const std::atomic<bool>& stop) {
    sleep_until(std::min(limit, Clock::now() + m_pause), stop);
    m_pause = std::min<Clock::duration>(m_pause * 2, k_longest_poll);
  }
  void reset() { m_pause = k_first_poll; }

 private:
  Clock::duration m_pause = k_first_poll;
};

}  // namespace

std::optional<compile::CompileOutcome> FleetGate::look(const proto::Digest256& key_id) {
  auto found = m_serving.lookup(store::Selector::key_id(key_id), store::Visibility{store::k_shared_namespace, false});
  if (!found || !store::is_hit(*found)) return std::nullopt;
  const store::Hit& hit = std::get<store::Hit>(*found);
  compile::CompileOutcome outcome;
  outcome.kind = compile::OutcomeKind::compiled;
  outcome.image.assign(hit.image->begin(), hit.image->end());
  outcome.producer = hit.info.producer;
  outcome.compile_time_us = hit.info.compile_time_us;
  outcome.from_elsewhere = true;
  return outcome;
}

FleetGate::Waited FleetGate::wait_for_holder(const proto::Digest256& key_id, std::int64_t expiry_ms,
                                             Clock::time_point until, const std::atomic<bool>& stop,
                                             std::optional<compile::CompileOutcome>& found) {
  const auto ttl_ms = m_tier.settings().lease_ttl.count();
  std::int64_t last_expiry = expiry_ms != 0 ? expiry_ms : unix_ms() + ttl_ms;
  Backoff backoff;
  while (!stop.load(std::memory_order_relaxed) && Clock::now() < until) {
    backoff.sleep(until, stop);
    if ((found = look(key_id))) return Waited::found;
    if (m_tier.holds_lease(key_id)) return Waited::ours;
    const LeaseState state = m_tier.lease_state(key_id);
    if (state.seen == LeaseSeen::held) {
      last_expiry = state.expiry_ms != 0 ? state.expiry_ms : unix_ms() + ttl_ms;
      continue;
    }
    // Unknown is not gone: the holder's lease holds until its own expiry, whatever the remote
    // answers meanwhile (a pause, a timeout under load, an open breaker).
    if (state.seen == LeaseSeen::unknown && unix_ms() < last_expiry) continue;
    // Free: the holder finished (its entry may have landed just now) or failed, or died.
    if ((found = look(key_id))) return Waited::found;
    return Waited::gone;
  }
  return Waited::given_up;
}

std::optional<compile::CompileOutcome> FleetGate::under_own_lease(const proto::Digest256& key_id) {
  auto found = look(key_id);
  if (found) m_tier.release_lease(key_id);
  return found;
}

std::optional<compile::CompileOutcome> FleetGate::before_compile(const compile::GateSubject& subject,
                                                                 const std::atomic<bool>& stop) {
  const proto::Digest256& key_id = subject.key_id;
  if (m_tier.remote_count() == 0) return std::nullopt;
  const TierSettings& settings = m_tier.settings();
  const auto give_up = Clock::now() + settings.lease_wait;
  const bool builder = m_tier.uploads();
  RemoteCounters* waited_on = nullptr;  // the remote whose lease this host waited for
  // Unset while time_point::max() (an optional<time_point> here trips GCC 12's maybe-uninitialized).
  constexpr Clock::time_point k_unset = Clock::time_point::max();
  Clock::time_point unknown_since = k_unset;
  Clock::time_point builder_grace_end = k_unset;
  bool asked = false;
  Backoff backoff;
  auto note_wait = [&](std::size_t remote) {
    if (waited_on != nullptr) return;
    waited_on = &m_tier.remote(remote).counters;
    RemoteCounters::add(waited_on->leases_waited);
    spdlog::debug("key_id={}: another host compiles it; waiting up to {} ms", proto::to_hex(key_id),
                  settings.lease_wait.count());
  };
  // Unknown: ask again with a backoff, for k_unknown_patience in all.
  auto still_patient = [&] {
    if (unknown_since == k_unset) unknown_since = Clock::now();
    if (Clock::now() - unknown_since >= k_unknown_patience) return false;
    backoff.sleep(give_up, stop);
    return true;
  };

  while (!stop.load(std::memory_order_relaxed) && Clock::now() < give_up) {
    std::optional<std::size_t> holder_remote;
    std::int64_t holder_expiry = 0;
    if (builder) {
      // Taken for a consumer's ask just before this compile started (ask_desk.hpp).
      if (m_tier.holds_lease(key_id)) return under_own_lease(key_id);
      const LeaseAnswer lease = m_tier.take_lease(key_id);
      if (lease.take == LeaseTake::won) {
        // The holder before us may have finished between this request's lookup and our lease.
        if (auto found = look(key_id)) {
          m_tier.release_lease(key_id);
          if (waited_on != nullptr) RemoteCounters::add(waited_on->lease_waits_served);
          return found;
        }
        if (waited_on != nullptr) RemoteCounters::add(waited_on->lease_waits_expired);
        return std::nullopt;
      }
      if (lease.take == LeaseTake::unavailable) break;
      if (lease.take == LeaseTake::unknown) {
        if (still_patient()) continue;
        break;
      }
      holder_remote = lease.remote;
      holder_expiry = lease.expiry_ms;
    } else {
      const LeaseState state = m_tier.lease_state(key_id);
      if (state.seen == LeaseSeen::unknown) {
        if (still_patient()) continue;
        break;
      }
      if (state.seen == LeaseSeen::free) {
        if (auto found = look(key_id)) {
          if (waited_on != nullptr) RemoteCounters::add(waited_on->lease_waits_served);
          return found;
        }
        // No lease yet: wait for a builder's, while one is up, for builder_wait from the first look,
        // having asked the builders to compile the key (the first consumer of a herd asks; a key
        // no builder was asked for would otherwise be compiled by every consumer).
        if (builder_grace_end == k_unset) builder_grace_end = Clock::now() + settings.builder_wait;
        if (Clock::now() < builder_grace_end && m_tier.builder_alive().value_or(false)) {
          if (!asked && m_asks != nullptr) {
            asked = true;  // once per flight: a failed ask is not tried again (compiled here after the wait)
            (void)m_asks->ask(subject);
          }
          backoff.sleep(std::min(give_up, builder_grace_end), stop);
          continue;
        }
        break;
      }
      holder_remote = state.remote;
      holder_expiry = state.expiry_ms;
    }
    unknown_since = k_unset;
    note_wait(*holder_remote);
    std::optional<compile::CompileOutcome> found;
    const Waited waited = wait_for_holder(key_id, holder_expiry, give_up, stop, found);
    if (waited == Waited::found) {
      RemoteCounters::add(waited_on->lease_waits_served);
      return found;
    }
    if (waited == Waited::given_up) break;
    if (waited == Waited::ours) return under_own_lease(key_id);
    // Gone without an entry: a builder takes the lease over; a consumer waits for a builder that
    // does (another builder_wait, from now).
    builder_grace_end = k_unset;
    backoff.reset();
  }
  // The COMPILE's own lookup asked the local store only (defer_remote.hpp): the remotes may have it.
  if (auto found = look(key_id)) {
    if (waited_on != nullptr) RemoteCounters::add(waited_on->lease_waits_served);
    return found;
  }
  if (waited_on != nullptr) {
    RemoteCounters::add(waited_on->lease_waits_expired);
    spdlog::info("key_id={}: compiling here after waiting for another host's compile", proto::to_hex(key_id));
  }
  return std::nullopt;
}

void FleetGate::after_compile(const proto::Digest256& key_id, const compile::CompileOutcome& outcome) {
  // A compiled entry's lease goes with its upload (remote_tier.cpp); a failure frees the key now.
  if (outcome.kind != compile::OutcomeKind::compiled) m_tier.release_lease(key_id);
}

}  // namespace jitcache::daemon::remote
