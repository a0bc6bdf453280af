// The compile service: refusal checks, a negative cache, single flight and a concurrency governor in
// front of a JobRunner (normally CompileRunner: one worker process per compile).
//
//   submit → refused?            → the handler gets `refused` at once
//          → remembered failure? → the handler gets it at once (negative_hits)
//          → same key queued or running → joins it (single_flight_joins)
//          → its tenant at its share of slots or PTX bytes → `busy` at once (busy_per_tenant)
//          → queue full?         → `busy` at once (busy_rejections)
//          → queued; interactive ahead of warm; at most max_concurrent compiles run at a time
//
// Within a priority, tenants are served in turn, not first come first served: a free slot goes to
// the queued compile of the tenant with the fewest running, then the one that started a compile
// least recently, then the oldest of that tenant's; and while max_concurrent is 2 or more, one
// tenant runs at most max_concurrent - 1 at once (max_running_per_tenant), so a slot stays for the
// others. One uid's long compiles thus make another's wait for at most one of them to end, never for
// its whole queue (docs/security.md "Who pays for what"). A compile without a tenant is neither
// capped nor counted.
//
// Every waiter of a compile gets the same outcome. A waiter may leave(); that cancels nothing, and a
// compile whose waiters have all left still runs to its end. A successful compile goes to the store
// sink exactly once, before any waiter hears of it, whether or not anyone still waits. Failures are
// remembered for negative_ttl (negative_cache.hpp). docs/compile-service.md has the whole story.
//
// Thread safety: submit, leave and stop may be called from any thread. Handlers and the sink run on
// a compile thread, or inside submit() for answers that need no compile, never under the service's
// lock; they must not block for long (post the work elsewhere: async_compile.hpp does that).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include <common/result.hpp>
#include <proto/digest.hpp>
#include <proto/key.hpp>

#include <daemon/compile/compile_counters.hpp>
#include <daemon/compile/compile_gate.hpp>
#include <daemon/compile/compile_outcome.hpp>
#include <daemon/compile/job_runner.hpp>
#include <daemon/compile/negative_cache.hpp>
#include <daemon/compile/prepare_job.hpp>
#include <daemon/compile/toolkit_support.hpp>

namespace jitcache::daemon::compile {

// A client blocked on the result goes ahead of warm-up work (`jitcache warm`).
enum class Priority : std::uint8_t { interactive = 0, warm = 1 };

struct CompileServiceConfig {
  unsigned max_concurrent = 0;   // compiles at once; 0 = std::thread::hardware_concurrency()
  std::size_t max_queued = 256;  // compiles waiting for a slot; one more is `busy`
  // Per tenant (the daemon's tenants are uids): compiles it started that are queued or running, and
  // the PTX bytes their jobs hold; one more is `busy` (busy_per_tenant). A join needs neither.
  // 0 = no limit. A submit without a tenant is not limited this way.
  std::size_t max_queued_per_tenant = 0;
  std::uint64_t max_bytes_per_tenant = 0;
  std::chrono::milliseconds negative_ttl{60'000};  // 0 = failures are not remembered
  std::size_t max_negative_entries = 4096;
};

using CompletionHandler = std::function<void(CompileOutcomePtr)>;
// Receives each successful compile once: key id, the `compiled` outcome (image, producer, time)
// and the job it was compiled from (its source, for a tier that keeps it: store.hpp PutInput).
using StoreSink =
    std::function<void(const proto::Digest256& key_id, const CompileOutcomePtr& outcome, const CompileJob& job)>;

// Names one waiter for leave(). waiter == 0: the handler already ran inside submit().
struct CompileTicket {
  proto::Digest256 key_id;
  std::uint64_t waiter = 0;
};

class CompileService {
 public:
  // `toolkit` is what the runner's workers compile with (CompileRunner::probe_toolkit); `linker` the
  // build of their nvJitLink (CompileRunner::linker), without which no link is compiled.
  CompileService(CompileServiceConfig config, ToolkitVersion toolkit, std::shared_ptr<JobRunner> runner, StoreSink sink,
                 std::optional<proto::DriverId> linker = std::nullopt);
  ~CompileService();  // stop()
  CompileService(const CompileService&) = delete;
  CompileService& operator=(const CompileService&) = delete;

  // `key_id` must be the key id of (content digest of input.ptx, input.arch, input.driver_api, the
  // driver build, input.options): one key, one job. A non-canonical option string is
  // ErrorCode::invalid_argument and the handler is not called; otherwise it is called exactly once
  // unless the ticket leaves first. input.ptx (a link's input.link_inputs) is copied into the job of a
  // new compile and not kept otherwise: once submit returns, the caller may free it. A tenant is
  // charged its job's source bytes, a link's inputs all together. `tenant`: who asked, for the per-tenant
  // limits (none: not limited).
  common::Result<CompileTicket> submit(const proto::Digest256& key_id, const CompileInput& input, Priority priority,
                                       CompletionHandler handler, std::optional<std::uint32_t> tenant = std::nullopt);

  // The waiter's handler will not be called; the compile goes on for the others and for the sink.
  // False when the handler has already run or is running.
  bool leave(const CompileTicket& ticket);

  // Queued compiles get `busy`, running ones are abandoned (their workers killed), later submits
  // get `busy`; returns when every compile thread has ended.
  void stop();

  // Consulted before every compile (fleet single flight); set before the first submit, kept alive
  // by the caller until stop().
  void set_gate(CompileGate* gate) { m_gate = gate; }

  // The failure remembered for `key_id` (negative_cache.hpp), or null: what EXPLAIN reports as a
  // compile error remembered. Reading it does not count as a negative hit.
  CompileOutcomePtr remembered_failure(const proto::Digest256& key_id);

  const CompileCounters& counters() const { return m_counters; }
  // Whether links of nvJitLink sessions can be compiled (HELLO capability bit 9).
  bool compiles_links() const { return m_linker.has_value(); }
  unsigned max_concurrent() const { return static_cast<unsigned>(m_threads.size()); }

 private:
  struct Flight;
  using FlightPtr = std::shared_ptr<Flight>;

  // An answer that needs no compile (stopping, a remembered failure) or a join of the key's flight.
  struct EarlyAnswer {
    CompileOutcomePtr outcome;  // deliver now; null for a join
    CompileTicket ticket;
  };
  std::optional<EarlyAnswer> answer_locked(const proto::Digest256& key_id, Priority priority,
                                           CompletionHandler& handler);
  void compile_loop();
  FlightPtr next_flight();  // blocks; null when stopping
  // The queue and position of the compile to start next (the order above), or none that may start.
  std::optional<std::pair<std::size_t, std::size_t>> pick_locked() const;
  void finish(const FlightPtr& flight, const CompileOutcomePtr& outcome);
  bool queue_has_room_for(Priority priority, std::vector<FlightPtr>& displaced);
  // The busy message when `tenant` may not start a compile of `bytes` more PTX; empty when it may.
  std::string tenant_refusal_locked(std::optional<std::uint32_t> tenant, std::uint64_t bytes) const;
  void charge_locked(Flight& flight);     // the flight's tenant takes a slot and its job's PTX bytes
  void discharge_locked(Flight& flight);  // and gives them back (once, however the flight ends)
  static void deliver(std::vector<CompletionHandler>& handlers, const CompileOutcomePtr& outcome);

  CompileServiceConfig m_config;
  ToolkitVersion m_toolkit;
  std::optional<proto::DriverId> m_linker;
  std::shared_ptr<JobRunner> m_runner;
  StoreSink m_sink;
  CompileGate* m_gate = nullptr;
  CompileCounters m_counters;

  std::mutex m_mutex;
  std::condition_variable m_work;
  std::map<proto::Digest256, FlightPtr> m_flights;  // queued or running
  std::deque<FlightPtr> m_queue[2];                 // by Priority
  struct TenantLoad {
    std::size_t flights = 0;
    std::uint64_t bytes = 0;
    std::size_t running = 0;
    std::uint64_t last_started = 0;  // m_starts when it last started a compile; 0: not since it came
  };
  std::unordered_map<std::uint32_t, TenantLoad> m_tenants;  // of the flights queued or running
  NegativeCache m_negative;
  std::uint64_t m_next_waiter = 1;
  std::uint64_t m_starts = 0;                // compiles started, the clock of TenantLoad::last_started
  std::size_t m_max_running_per_tenant = 1;  // max(1, threads - 1)
  std::atomic<bool> m_stopping{false};
  std::vector<std::thread> m_threads;
};

}  // namespace jitcache::daemon::compile
