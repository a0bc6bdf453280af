#include <daemon/compile/compile_service.hpp>

#include <algorithm>
#include <common/result.hpp>
#include <optional>
#include <utility>
#include <variant>

namespace jitcache::daemon::compile {

namespace {

using Clock = std::chrono::steady_clock;

CompileOutcomePtr shared(CompileOutcome outcome) { return std::make_shared<const CompileOutcome>(std::move(outcome)); }

CompileOutcomePtr busy(std::string message) { return shared(CompileOutcome::make_busy(std::move(message))); }

constexpr const char* k_stopping = "the compile service is stopping";

std::size_t index(Priority priority) { return static_cast<std::size_t>(priority); }

}  // namespace

struct CompileService::Flight {
  proto::Digest256 key_id;
  CompileJob job;
  Priority priority = Priority::warm;
  bool running = false;
  std::optional<std::uint32_t> tenant;  // who started it, charged for its slot and job.ptx
  std::uint64_t charged_bytes = 0;
  std::vector<std::pair<std::uint64_t, CompletionHandler>> waiters;
  // The key's fields the job leaves out, for the gate (a fleet consumer passes them on).
  std::uint32_t driver_api = 0;
  std::string driver_build;
  std::string options;
};

CompileService::CompileService(CompileServiceConfig config, ToolkitVersion toolkit, std::shared_ptr<JobRunner> runner,
                               StoreSink sink, std::optional<proto::DriverId> linker)
    : m_config(config),
      m_toolkit(toolkit),
      m_linker(std::move(linker)),
      m_runner(std::move(runner)),
      m_sink(std::move(sink)),
      m_negative(config.negative_ttl, config.max_negative_entries) {
  // Rationale: a queue of 0 could never hold the request it is about to hand to an idle thread.
  m_config.max_queued = std::max<std::size_t>(m_config.max_queued, 1);
  const unsigned threads =
      config.max_concurrent != 0 ? config.max_concurrent : std::max(1u, std::thread::hardware_concurrency());
  // Rationale: one slot stays for other tenants whenever there are two (compile_service.hpp).
  m_max_running_per_tenant = std::max(1u, threads - 1);
  for (unsigned i = 0; i < threads; ++i) m_threads.emplace_back([this] { compile_loop(); });
}

CompileService::~CompileService() { stop(); }

std::optional<CompileService::EarlyAnswer> CompileService::answer_locked(const proto::Digest256& key_id,
                                                                         Priority priority,
                                                                         CompletionHandler& handler) {
  if (m_stopping) return EarlyAnswer{busy(k_stopping), {key_id, 0}};
  if (auto remembered = m_negative.find(key_id, Clock::now())) {
    CompileCounters::add(m_counters.negative_hits);
    return EarlyAnswer{std::move(remembered), {key_id, 0}};
  }
  const auto it = m_flights.find(key_id);
  if (it == m_flights.end()) return std::nullopt;
  Flight& flight = *it->second;
  const std::uint64_t waiter = m_next_waiter++;
  flight.waiters.emplace_back(waiter, std::move(handler));
  CompileCounters::add(m_counters.single_flight_joins);
  if (!flight.running && priority == Priority::interactive && flight.priority == Priority::warm) {
    std::erase(m_queue[index(Priority::warm)], it->second);
    m_queue[index(Priority::interactive)].push_back(it->second);
    flight.priority = Priority::interactive;
  }
  return EarlyAnswer{nullptr, {key_id, waiter}};
}

common::Result<CompileTicket> CompileService::submit(const proto::Digest256& key_id, const CompileInput& input,
                                                     Priority priority, CompletionHandler handler,
                                                     std::optional<std::uint32_t> tenant) {
  const auto answer = [&](EarlyAnswer early) {
    if (early.outcome) handler(early.outcome);
    return early.ticket;
  };
  const auto tenant_busy = [&](std::string message) {
    CompileCounters::add(m_counters.busy_rejections);
    CompileCounters::add(m_counters.busy_per_tenant);
    return answer({busy(std::move(message)), {key_id, 0}});
  };
  std::unique_lock lock(m_mutex);
  if (auto early = answer_locked(key_id, priority, handler)) {
    lock.unlock();
    return answer(std::move(*early));
  }
  // Checked again below; here it spares the copy of a PTX that would only be refused.
  if (std::string refusal = tenant_refusal_locked(tenant, input.source_bytes()); !refusal.empty()) {
    lock.unlock();
    return tenant_busy(std::move(refusal));
  }
  // Rationale: preparing copies the PTX (megabytes), so it happens outside the lock and only for a
  // key nobody is compiling; the check is repeated after, for a flight that started meanwhile.
  lock.unlock();
  auto prepared = prepare_job(input, m_toolkit, m_linker);
  JITCACHE_TRY(prepared);
  if (auto* refusal = std::get_if<Refusal>(&*prepared)) {
    CompileCounters::add(m_counters.refused);
    return answer({shared(CompileOutcome::make_refused(std::move(*refusal))), {key_id, 0}});
  }
  lock.lock();
  if (auto early = answer_locked(key_id, priority, handler)) {
    lock.unlock();
    return answer(std::move(*early));
  }
  if (std::string refusal = tenant_refusal_locked(tenant, input.source_bytes()); !refusal.empty()) {
    lock.unlock();
    return tenant_busy(std::move(refusal));
  }
  std::vector<FlightPtr> displaced;
  if (!queue_has_room_for(priority, displaced)) {
    CompileCounters::add(m_counters.busy_rejections);
    lock.unlock();
    return answer({busy("the compile queue is full (" + std::to_string(m_config.max_queued) +
                        " waiting); build it yourself or try again later"),
                   {key_id, 0}});
  }
  auto flight = std::make_shared<Flight>();
  flight->key_id = key_id;
  flight->job = std::move(std::get<CompileJob>(*prepared));
  flight->priority = priority;
  flight->tenant = tenant;
  flight->driver_api = input.driver_api;
  flight->driver_build = input.driver_build;
  flight->options = input.options;
  charge_locked(*flight);
  const std::uint64_t waiter = m_next_waiter++;
  flight->waiters.emplace_back(waiter, std::move(handler));
  m_flights.emplace(key_id, flight);
  m_queue[index(priority)].push_back(flight);
  CompileCounters::add(m_counters.queue_length);
  lock.unlock();
  m_work.notify_one();
  for (const FlightPtr& victim : displaced) {
    std::vector<CompletionHandler> handlers;
    for (auto& [id, h] : victim->waiters) handlers.push_back(std::move(h));
    CompileCounters::add(m_counters.busy_rejections, handlers.size());
    deliver(handlers, busy("the compile queue is full and a request a client waits for took this slot"));
  }
  return CompileTicket{key_id, waiter};
}

std::string CompileService::tenant_refusal_locked(std::optional<std::uint32_t> tenant, std::uint64_t bytes) const {
  if (!tenant) return {};
  const auto found = m_tenants.find(*tenant);
  const TenantLoad load = found == m_tenants.end() ? TenantLoad{} : found->second;
  const std::string who = "uid " + std::to_string(*tenant);
  if (m_config.max_queued_per_tenant != 0 && load.flights >= m_config.max_queued_per_tenant) {
    return who + " has " + std::to_string(load.flights) +
           " compiles queued or running (compile_queue_per_uid); build it yourself or try again later";
  }
  if (m_config.max_bytes_per_tenant != 0 &&
      (bytes > m_config.max_bytes_per_tenant || load.bytes > m_config.max_bytes_per_tenant - bytes)) {
    return who + "'s queued and running compiles hold " + std::to_string(load.bytes) + " bytes of PTX; " +
           std::to_string(bytes) + " more would pass compile_bytes_per_uid (" +
           std::to_string(m_config.max_bytes_per_tenant) + "); build it yourself or try again later";
  }
  return {};
}

void CompileService::charge_locked(Flight& flight) {
  if (!flight.tenant) return;
  flight.charged_bytes = flight.job.source_bytes();
  TenantLoad& load = m_tenants[*flight.tenant];
  ++load.flights;
  load.bytes += flight.charged_bytes;
}

void CompileService::discharge_locked(Flight& flight) {
  if (!flight.tenant) return;
  const auto found = m_tenants.find(*flight.tenant);
  flight.tenant.reset();  // once only, whichever way the flight ends
  if (found == m_tenants.end()) return;
  --found->second.flights;
  found->second.bytes -= flight.charged_bytes;
  if (flight.running && found->second.running > 0) --found->second.running;
  if (found->second.flights == 0) m_tenants.erase(found);
}

bool CompileService::queue_has_room_for(Priority priority, std::vector<FlightPtr>& displaced) {
  auto& warm = m_queue[index(Priority::warm)];
  if (m_queue[0].size() + m_queue[1].size() < m_config.max_queued) return true;
  // Rationale: warm-up must never lock out a client that is blocked on its load: when the queue is
  // full, an interactive request takes the slot of the most recently queued warm compile.
  if (priority != Priority::interactive || warm.empty()) return false;
  displaced.push_back(warm.back());
  warm.pop_back();
  m_flights.erase(displaced.back()->key_id);
  discharge_locked(*displaced.back());
  CompileCounters::sub(m_counters.queue_length);
  return true;
}

CompileOutcomePtr CompileService::remembered_failure(const proto::Digest256& key_id) {
  std::lock_guard lock(m_mutex);
  return m_negative.find(key_id, Clock::now());
}

bool CompileService::leave(const CompileTicket& ticket) {
  std::lock_guard lock(m_mutex);
  const auto it = m_flights.find(ticket.key_id);
  if (ticket.waiter == 0 || it == m_flights.end()) return false;
  return std::erase_if(it->second->waiters, [&](const auto& w) { return w.first == ticket.waiter; }) > 0;
}

void CompileService::compile_loop() {
  while (FlightPtr flight = next_flight()) {
    if (m_gate != nullptr) {
      GateSubject subject(flight->key_id);
      subject.arch = flight->job.arch;
      subject.driver_api = flight->driver_api;
      subject.driver_build = flight->driver_build;
      subject.options = flight->options;
      subject.ptx = flight->job.ptx;
      if (auto elsewhere = m_gate->before_compile(subject, m_stopping)) {
        finish(flight, shared(std::move(*elsewhere)));
        continue;
      }
    }
    const auto start = Clock::now();
    auto outcome = shared(m_runner->run(flight->job, m_stopping));
    const auto elapsed = std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - start);
    if (m_gate != nullptr) m_gate->after_compile(flight->key_id, *outcome);
    if (outcome->failure != WorkerFailure::cancelled) {
      CompileCounters::add(m_counters.compiles);
      CompileCounters::add(m_counters.compile_microseconds, static_cast<std::uint64_t>(elapsed.count()));
      if (outcome->kind == OutcomeKind::compile_error || outcome->kind == OutcomeKind::worker_failed) {
        CompileCounters::add(m_counters.compile_failures);
      }
      if (outcome->kind == OutcomeKind::refused) CompileCounters::add(m_counters.refused);
    }
    finish(flight, outcome);
  }
}

std::optional<std::pair<std::size_t, std::size_t>> CompileService::pick_locked() const {
  for (std::size_t q = 0; q < 2; ++q) {
    std::optional<std::size_t> best;
    std::pair<std::size_t, std::uint64_t> best_rank{};
    for (std::size_t i = 0; i < m_queue[q].size(); ++i) {
      const Flight& flight = *m_queue[q][i];
      if (!flight.tenant) return std::pair{q, i};  // not a tenant's: in queue order, uncapped
      const auto found = m_tenants.find(*flight.tenant);
      const TenantLoad load = found == m_tenants.end() ? TenantLoad{} : found->second;
      if (load.running >= m_max_running_per_tenant) continue;
      const std::pair<std::size_t, std::uint64_t> rank{load.running, load.last_started};
      if (!best || rank < best_rank) {
        best = i;
        best_rank = rank;
      }
    }
    if (best) return std::pair{q, *best};
  }
  return std::nullopt;
}

CompileService::FlightPtr CompileService::next_flight() {
  std::unique_lock lock(m_mutex);
  std::optional<std::pair<std::size_t, std::size_t>> picked;
  m_work.wait(lock, [&] {
    if (m_stopping) return true;
    picked = pick_locked();
    return picked.has_value();
  });
  if (m_stopping) return nullptr;
  auto& queue = m_queue[picked->first];
  FlightPtr flight = queue[picked->second];
  queue.erase(queue.begin() + static_cast<std::ptrdiff_t>(picked->second));
  flight->running = true;
  if (flight->tenant) {
    TenantLoad& load = m_tenants[*flight->tenant];
    ++load.running;
    load.last_started = ++m_starts;
  }
  CompileCounters::sub(m_counters.queue_length);
  CompileCounters::add(m_counters.running);
  return flight;
}

void CompileService::finish(const FlightPtr& flight, const CompileOutcomePtr& outcome) {
  // The store hears first, so a waiter that looks the key up after its answer finds it stored (as
  // far as the sink's own writes allow).
  if (outcome->kind == OutcomeKind::compiled && !outcome->from_elsewhere && m_sink) {
    m_sink(flight->key_id, outcome, flight->job);
  }
  std::vector<CompletionHandler> handlers;
  {
    std::lock_guard lock(m_mutex);
    m_flights.erase(flight->key_id);
    discharge_locked(*flight);
    CompileCounters::sub(m_counters.running);
    if (worth_remembering(*outcome)) m_negative.remember(flight->key_id, *outcome, Clock::now());
    for (auto& [id, handler] : flight->waiters) handlers.push_back(std::move(handler));
    flight->waiters.clear();
    flight->job = CompileJob{};
  }
  // A slot is free, and a tenant's cap may have let go of a compile no thread could start.
  m_work.notify_all();
  deliver(handlers, outcome);
}

void CompileService::deliver(std::vector<CompletionHandler>& handlers, const CompileOutcomePtr& outcome) {
  for (CompletionHandler& handler : handlers) {
    if (handler) handler(outcome);
  }
}

void CompileService::stop() {
  std::vector<FlightPtr> abandoned;
  {
    std::lock_guard lock(m_mutex);
    m_stopping = true;
    for (auto& queue : m_queue) {
      for (FlightPtr& flight : queue) {
        m_flights.erase(flight->key_id);
        discharge_locked(*flight);
        CompileCounters::sub(m_counters.queue_length);
        abandoned.push_back(std::move(flight));
      }
      queue.clear();
    }
  }
  m_work.notify_all();
  for (const FlightPtr& flight : abandoned) {
    std::vector<CompletionHandler> handlers;
    for (auto& [id, handler] : flight->waiters) handlers.push_back(std::move(handler));
    deliver(handlers, busy(k_stopping));
  }
  for (std::thread& thread : m_threads) {
    if (thread.joinable()) thread.join();
  }
}

}  // namespace jitcache::daemon::compile
