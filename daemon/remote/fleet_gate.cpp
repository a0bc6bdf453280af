#include <daemon/remote/fleet_gate.hpp>

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

// Sleeps until `until`, waking every few milliseconds to see `stop`.
void sleep_until(Clock::time_point until, const std::atomic<bool>& stop) {
  while (!stop.load(std::memory_order_relaxed)) {
    const auto now = Clock::now();
    if (now >= until) return;
    std::this_thread::sleep_for(std::min<Clock::duration>(until - now, 10ms));
  }
}

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

std::optional<compile::CompileOutcome> FleetGate::before_compile(const proto::Digest256& key_id,
                                                                 const std::atomic<bool>& stop) {
  if (m_tier.remote_count() == 0) return std::nullopt;
  std::size_t where = 0;
  if (m_tier.uploads()) {
    const LeaseAnswer lease = m_tier.take_lease(key_id);
    if (lease.take == LeaseTake::won) {
      // The holder before us may have finished between this request's lookup and our lease.
      if (auto found = look(key_id)) {
        m_tier.release_lease(key_id);
        return found;
      }
      return std::nullopt;
    }
    if (lease.take == LeaseTake::unavailable) return std::nullopt;
    where = lease.remote;
  } else {
    const auto held = m_tier.lease_held(key_id);
    if (!held) return std::nullopt;
    where = *held;
  }
  RemoteCounters& counters = m_tier.remote(where).counters;
  RemoteCounters::add(counters.leases_waited);
  spdlog::debug("key_id={}: another host compiles it; waiting up to {} ms", proto::to_hex(key_id),
                m_tier.settings().lease_wait.count());
  const auto give_up = Clock::now() + m_tier.settings().lease_wait;
  auto pause = std::chrono::duration_cast<Clock::duration>(k_first_poll);
  while (!stop.load(std::memory_order_relaxed) && Clock::now() < give_up) {
    sleep_until(std::min(give_up, Clock::now() + pause), stop);
    pause = std::min<Clock::duration>(pause * 2, k_longest_poll);
    if (auto found = look(key_id)) {
      RemoteCounters::add(counters.lease_waits_served);
      return found;
    }
    if (m_tier.lease_held(key_id)) continue;
    // The holder is gone without an entry: it failed, or died and its lease expired.
    if (auto found = look(key_id)) {
      RemoteCounters::add(counters.lease_waits_served);
      return found;
    }
    if (m_tier.uploads() && m_tier.take_lease(key_id).take == LeaseTake::held_elsewhere) continue;  // another took it
    break;
  }
  RemoteCounters::add(counters.lease_waits_expired);
  spdlog::info("key_id={}: compiling here after waiting for another host's compile", proto::to_hex(key_id));
  return std::nullopt;
}

void FleetGate::after_compile(const proto::Digest256& key_id, const compile::CompileOutcome& outcome) {
  // A compiled entry's lease goes with its upload (remote_tier.cpp); a failure frees the key now.
  if (outcome.kind != compile::OutcomeKind::compiled) m_tier.release_lease(key_id);
}

}  // namespace jitcache::daemon::remote
