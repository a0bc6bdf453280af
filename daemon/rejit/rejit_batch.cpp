// Rejit::run_batch: one batch of re-JIT compiles (rejit.hpp), within the budget and the compile
// service's concurrency.
#include <daemon/rejit/rejit.hpp>

#include <spdlog/spdlog.h>

#include <set>
#include <vector>

#include <daemon/rejit/rejit_budget.hpp>
#include <daemon/rejit/rejit_shared.hpp>

namespace jitcache::daemon::rejit {

namespace {

struct Flight {
  proto::Digest256 key_id;
  compile::CompileTicket ticket;
  std::uint64_t estimate_us = 0;
};

}  // namespace

BatchResult Rejit::run_batch(const Plan& plan) {
  BatchResult result;
  auto hot = m_sources.hot_set(plan.query);
  if (!hot) {
    spdlog::warn("re-JIT {} -> {}: cannot read the hot set: {}", plan.from, plan.to, hot.error().message);
    return result;
  }
  // Re-keyed, each target key once (entries of two archs re-keyed to a new one are one key), and
  // only what is not stored for the target already (a batch before, a client since).
  std::vector<store::HotEntry> todo;
  std::set<proto::Digest256> targets;
  for (store::HotEntry& entry : *hot) {
    if (plan.to_driver) {
      entry.key.driver_api = plan.to_driver->first;
      entry.key.driver_build = plan.to_driver->second;
    }
    if (plan.to_arch) entry.key.arch = *plan.to_arch;
    if (!proto::validate_key(entry.key)) continue;
    const proto::Digest256 key_id = proto::key_id(entry.key);
    if (!targets.insert(key_id).second) continue;
    auto stored = m_sources.has_shared_entry(key_id);
    if (stored && *stored) continue;
    todo.push_back(std::move(entry));
  }
  result.planned = todo.size();
  if (todo.empty()) return result;
  stats::Counters::add(m_counters.rejit_batches);

  const std::shared_ptr<Shared> shared = m_shared;
  std::uint64_t batch = 0;
  {
    std::lock_guard lock(shared->mutex);
    batch = ++shared->batch;
    shared->completions.clear();
  }
  RejitBudget budget(static_cast<std::uint64_t>(m_settings.budget.count()));
  const std::size_t window = std::max(1u, m_service.max_concurrent());
  std::vector<std::optional<Flight>> flights(todo.size());
  std::size_t running = 0;

  // Takes the completions there are (waiting for one when `wait`); false when stopping.
  auto collect = [&](bool wait) {
    std::deque<Shared::Completion> done;
    {
      std::unique_lock lock(shared->mutex);
      if (wait) shared->wake.wait(lock, [&] { return shared->stopping || !shared->completions.empty(); });
      if (shared->stopping) return false;
      done.swap(shared->completions);
    }
    for (const Shared::Completion& completion : done) {
      if (completion.batch != batch || !flights[completion.slot]) continue;
      const Flight& flight = *flights[completion.slot];
      m_sink.release(flight.key_id);
      const compile::CompileOutcome& outcome = *completion.outcome;
      const bool compiled = outcome.kind == compile::OutcomeKind::compiled;
      // Compile time is spent whether the PTX compiled or not; a remembered failure or one found
      // compiled elsewhere spent none here.
      const std::uint64_t spent = outcome.from_negative_cache || outcome.from_elsewhere ? 0 : outcome.compile_time_us;
      budget.settle(flight.estimate_us, spent);
      result.compile_us += spent;
      stats::Counters::add(m_counters.rejit_compile_microseconds, spent);
      if (compiled) {
        ++result.compiled;
        stats::Counters::add(m_counters.rejit_compiled);
      } else {
        ++result.failed;
        stats::Counters::add(m_counters.rejit_failed);
        spdlog::debug("re-JIT key_id={}: {}: {}", proto::to_hex(flight.key_id),
                      compile::outcome_kind_name(outcome.kind), outcome.message);
      }
      flights[completion.slot].reset();
      --running;
    }
    return true;
  };
  auto fail = [&] {
    ++result.failed;
    stats::Counters::add(m_counters.rejit_failed);
  };

  bool stopped = false;
  std::size_t next = 0;
  for (; next < todo.size(); ++next) {
    while (running >= window && !stopped) stopped = !collect(true);
    if (stopped || !collect(false)) {
      stopped = true;
      break;
    }
    const store::HotEntry& entry = todo[next];
    const std::uint64_t estimate = entry.compile_time_us;
    if (!budget.reserve(estimate)) break;
    auto ptx = m_sources.kept_source(entry.key.content);
    if (!ptx || !*ptx) {
      // Dropped for the budget (or unreadable) since the hot set was read.
      budget.settle(estimate, 0);
      fail();
      continue;
    }
    compile::CompileInput input;
    input.arch = entry.key.arch;
    input.driver_api = entry.key.driver_api;
    input.driver_build = entry.key.driver_build;
    input.options = entry.key.options;
    input.ptx = **ptx;
    const proto::Digest256 key_id = proto::key_id(entry.key);
    m_sink.expect(key_id, entry.key, entry.content_fast);
    const std::size_t slot = next;
    // Before submit: an answer that needs no compile (a remembered failure) arrives inside it.
    flights[slot] = Flight{key_id, {}, estimate};
    ++running;
    auto ticket =
        m_service.submit(key_id, input, compile::Priority::warm,
                         [shared, batch, slot](compile::CompileOutcomePtr outcome) {
                           {
                             std::lock_guard lock(shared->mutex);
                             shared->completions.push_back(Shared::Completion{batch, slot, std::move(outcome)});
                           }
                           shared->wake.notify_all();
                         });
    if (!ticket) {
      flights[slot].reset();
      --running;
      m_sink.release(key_id);
      budget.settle(estimate, 0);
      fail();
      spdlog::debug("re-JIT key_id={}: {}", proto::to_hex(key_id), ticket.error().message);
      continue;
    }
    if (flights[slot]) flights[slot]->ticket = *ticket;
  }
  // Whatever was not started: over the budget, or left because the daemon stops.
  result.over_budget = todo.size() - next;
  stats::Counters::add(m_counters.rejit_over_budget, result.over_budget);
  while (running > 0 && !stopped) stopped = !collect(true);
  result.stopped = stopped;
  if (stopped) {
    // Rationale: the compiles go on in the service (or are abandoned by its stop); their sink
    // registrations stay, so one that finishes is still stored rather than logged as unexpected.
    for (const std::optional<Flight>& flight : flights) {
      if (flight) m_service.leave(flight->ticket);
    }
  }
  return result;
}

}  // namespace jitcache::daemon::rejit
