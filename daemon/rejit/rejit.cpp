#include <daemon/rejit/rejit.hpp>

#include <spdlog/spdlog.h>

#include <algorithm>
#include <string>

#include <daemon/rejit/rejit_shared.hpp>

namespace jitcache::daemon::rejit {

namespace {

std::string driver_text(std::uint32_t api, const std::string& build) { return std::to_string(api) + "/" + build; }

}  // namespace

Rejit::Rejit(store::Sources& sources, compile::CompileService& service, compile_store::CompileStoreSink& sink,
             stats::Counters& counters, RejitSettings settings)
    : m_sources(sources),
      m_service(service),
      m_sink(sink),
      m_counters(counters),
      m_settings(settings),
      m_shared(std::make_shared<Shared>()) {
  if (auto drivers = m_sources.known_drivers(); drivers) {
    for (const store::KnownDriver& driver : *drivers) m_tracker.know_driver(driver.driver_api, driver.driver_build);
  } else {
    // Without them every driver asked for looks new once: a batch each, within the budget.
    spdlog::warn("re-JIT: cannot read the store's drivers: {}", drivers.error().message);
  }
  m_thread = std::thread([this] { run(); });
}

Rejit::~Rejit() { stop(); }

void Rejit::stop() {
  {
    std::lock_guard lock(m_shared->mutex);
    m_shared->stopping = true;
  }
  m_shared->wake.notify_all();
  if (m_thread.joinable()) m_thread.join();
}

void Rejit::asked(const std::string& arch, std::uint32_t driver_api, const std::string& driver_build,
                  std::optional<std::uint32_t> asker) {
  auto sighting = m_tracker.note(arch, driver_api, driver_build, asker);
  if (!sighting) return;
  {
    std::lock_guard lock(m_shared->mutex);
    if (m_shared->stopping) return;
    if (m_shared->events.size() >= k_max_events) {
      if (!m_shared->dropping) {
        spdlog::warn(
            "re-JIT: {} events waiting; driver {} arch {} and those asked for until they are done are not "
            "looked at",
            k_max_events, driver_text(driver_api, driver_build), arch);
      }
      m_shared->dropping = true;
      return;
    }
    m_shared->events.push_back(std::move(*sighting));
  }
  m_shared->wake.notify_all();
}

void Rejit::run() {
  for (;;) {
    Sighting sighting;
    {
      std::unique_lock lock(m_shared->mutex);
      m_shared->wake.wait(lock, [&] { return m_shared->stopping || !m_shared->events.empty(); });
      if (m_shared->stopping) return;
      sighting = std::move(m_shared->events.front());
      m_shared->events.pop_front();
      if (m_shared->events.empty()) m_shared->dropping = false;
    }
    auto plan = plan_for(sighting);
    if (!plan) continue;
    if (!may_start_batch(sighting.asker)) {
      if (!m_warned_rate) {
        spdlog::warn(
            "re-JIT {} -> {}: not started, {} batches ran within the last hour already, or {} set off by uid {} "
            "(and no other until one may)",
            plan->from, plan->to, k_max_batches_per_hour, k_max_batches_per_uid_hour,
            sighting.asker ? std::to_string(*sighting.asker) : std::string("(trusted)"));
      }
      m_warned_rate = true;
      continue;
    }
    m_warned_rate = false;
    const auto started = std::chrono::steady_clock::now();
    const BatchResult result = run_batch(*plan);
    if (result.planned == 0) {
      spdlog::debug("re-JIT {} -> {}: nothing to compile", plan->from, plan->to);
      continue;
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    spdlog::info(
        "re-JIT {} -> {}: planned {}, compiled {}, failed {}, over budget {}, compile time {:.3f} s of a {:.3f} s "
        "budget, {:.3f} s{}",
        plan->from, plan->to, result.planned, result.compiled, result.failed, result.over_budget,
        static_cast<double>(result.compile_us) / 1e6, static_cast<double>(m_settings.budget.count()) / 1e6, seconds,
        result.stopped ? " (stopped: the daemon is stopping)" : "");
  }
}

bool Rejit::may_start_batch(std::optional<std::uint32_t> asker) {
  const auto now = std::chrono::steady_clock::now();
  while (!m_batch_starts.empty() && now - m_batch_starts.front().first > std::chrono::hours(1)) {
    m_batch_starts.pop_front();
  }
  if (m_batch_starts.size() >= k_max_batches_per_hour) return false;
  if (asker) {
    const auto by_asker = std::count_if(m_batch_starts.begin(), m_batch_starts.end(),
                                        [&](const auto& start) { return start.second == asker; });
    if (static_cast<unsigned>(by_asker) >= k_max_batches_per_uid_hour) return false;
  }
  m_batch_starts.emplace_back(now, asker);
  return true;
}

std::optional<Rejit::Plan> Rejit::plan_for(const Sighting& sighting) {
  Plan plan;
  plan.query.limit = m_settings.max_batch_entries;
  if (sighting.new_driver) {
    auto drivers = m_sources.known_drivers();
    if (!drivers) {
      spdlog::warn("re-JIT for driver {}: cannot read the store's drivers: {}",
                   driver_text(sighting.driver_api, sighting.driver_build), drivers.error().message);
      return std::nullopt;
    }
    // The previous driver: the most recently asked for of the others (known_drivers' order).
    const store::KnownDriver* previous = nullptr;
    for (const store::KnownDriver& driver : *drivers) {
      if (driver.driver_api != sighting.driver_api || driver.driver_build != sighting.driver_build) {
        previous = &driver;
        break;
      }
    }
    if (previous == nullptr) return std::nullopt;
    plan.query.driver_api = previous->driver_api;
    plan.query.driver_build = previous->driver_build;
    plan.to_driver.emplace(sighting.driver_api, sighting.driver_build);
    plan.from = "driver " + driver_text(previous->driver_api, previous->driver_build);
    plan.to = "driver " + driver_text(sighting.driver_api, sighting.driver_build);
    return plan;
  }
  auto has = m_sources.has_entries_of(sighting.driver_api, sighting.driver_build, sighting.arch);
  if (!has) {
    spdlog::warn("re-JIT for arch {}: cannot read the store: {}", sighting.arch, has.error().message);
    return std::nullopt;
  }
  if (*has) return std::nullopt;
  plan.query.driver_api = sighting.driver_api;
  plan.query.driver_build = sighting.driver_build;
  plan.to_arch = sighting.arch;
  plan.from = "the other archs of driver " + driver_text(sighting.driver_api, sighting.driver_build);
  plan.to = "arch " + sighting.arch;
  return plan;
}

}  // namespace jitcache::daemon::rejit
