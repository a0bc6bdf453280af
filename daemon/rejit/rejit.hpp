// Rejit: after a driver upgrade, or when a new arch appears on the host, compiles the previous
// driver's (or the other archs') hot set again for the new one, in the background, so that the
// first programs after the change hit instead of each paying its JIT (docs/operations.md
// "Upgrading the driver").
//
//   LOOKUP / COMPILE ─▶ asked(arch, driver) ─▶ AskTracker: first ask of this pair since start?
//        ─▶ event queue (bounded) ─▶ the re-JIT thread:
//             a driver the store has no entries of → the hot set of the most recently asked other
//               driver, re-keyed to the new driver (every arch it has);
//             a known driver, an arch it has no entries of → the hot set of its other archs,
//               re-keyed to the new arch;
//        ─▶ one batch: entries ranked by (hits + 1) × compile time (store/sources.hpp), the kept
//           source of each compiled at warm priority (behind every client compile) through the
//           COMPILE op's sink, so the result is stored as a COMPILE's would be; at most as many at
//           once as the compile service runs; stopped when rejit_budget compile seconds would be
//           exceeded (rejit_budget.hpp). A failed compile is counted, never fatal.
//        ─▶ counters rejit_* and one info line per batch.
//
// Bounds (anyone may name any driver): AskTracker's pairs, k_max_events waiting, k_max_batch_entries
// per batch, one batch at a time, and at most k_max_batches_per_hour batches, of which at most
// k_max_batches_per_uid_hour set off by one untrusted uid; events over these are dropped and logged.
//
// Thread safety: asked() may be called from any thread and returns at once. stop() (and the
// destructor) may be called from any thread once; it does not wait for a running compile: the
// batch leaves its compiles to the service, which finishes or abandons them.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include <daemon/compile/compile_service.hpp>
#include <daemon/compile_store/ask_watcher.hpp>
#include <daemon/compile_store/compile_store_sink.hpp>
#include <daemon/rejit/ask_tracker.hpp>
#include <daemon/stats/counters.hpp>
#include <daemon/store/sources.hpp>

namespace jitcache::daemon::rejit {

// Rationale: a host's hot set is tens to hundreds of kernels; 1 024 entries bounds one batch's
// memory (keys only; one source at a time per running compile) whatever the store holds.
inline constexpr unsigned k_max_batch_entries = 1024;
inline constexpr std::size_t k_max_events = 16;
// Rationale: a real upgrade or a new GPU is one or two events an hour at most; made-up drivers
// past this many an hour cost nothing but a log line.
inline constexpr unsigned k_max_batches_per_hour = 8;
inline constexpr unsigned k_max_batches_per_uid_hour = 2;

struct RejitSettings {
  std::chrono::microseconds budget{0};  // compile time per batch (rejit_budget)
  unsigned max_batch_entries = k_max_batch_entries;
};

// What one batch did, for its log line and the counters.
struct BatchResult {
  std::uint64_t planned = 0;      // entries of the hot set not yet stored for the target
  std::uint64_t compiled = 0;     // compiled (or found compiled) and stored for the target
  std::uint64_t failed = 0;       // refused, failed to compile, worker failed, busy, no source
  std::uint64_t over_budget = 0;  // left because the budget ran out (or the daemon stopped)
  std::uint64_t compile_us = 0;   // compile time the batch spent
  bool stopped = false;           // the daemon stopped it; compiles it had running were left
};

class Rejit final : public compile_store::AskWatcher {
 public:
  // Reads the store's drivers (known from the start) and starts its thread.
  Rejit(store::Sources& sources, compile::CompileService& service, compile_store::CompileStoreSink& sink,
        stats::Counters& counters, RejitSettings settings);
  ~Rejit() override;
  Rejit(const Rejit&) = delete;
  Rejit& operator=(const Rejit&) = delete;

  void asked(const std::string& arch, std::uint32_t driver_api, const std::string& driver_build,
             std::optional<std::uint32_t> asker) override;
  // Ends the thread: a batch stops starting compiles and leaves the ones running.
  void stop();

 private:
  // What the thread and the compile service's handlers share; the handlers hold it, so one that
  // runs after the Rejit is gone touches nothing freed.
  struct Shared;
  // A batch: the hot set of one driver (and arch), re-keyed to a new driver or a new arch.
  struct Plan {
    std::string from;
    std::string to;
    store::HotSetQuery query;
    std::optional<std::pair<std::uint32_t, std::string>> to_driver;
    std::optional<std::string> to_arch;
  };

  void run();
  std::optional<Plan> plan_for(const Sighting& sighting);
  BatchResult run_batch(const Plan& plan);
  bool may_start_batch(std::optional<std::uint32_t> asker);

  store::Sources& m_sources;
  compile::CompileService& m_service;
  compile_store::CompileStoreSink& m_sink;
  stats::Counters& m_counters;
  const RejitSettings m_settings;
  AskTracker m_tracker;
  std::shared_ptr<Shared> m_shared;
  // The thread's own: when batches started in the last hour, and by which untrusted uid.
  std::deque<std::pair<std::chrono::steady_clock::time_point, std::optional<std::uint32_t>>> m_batch_starts;
  bool m_warned_rate = false;  // the thread's own
  std::thread m_thread;
};

}  // namespace jitcache::daemon::rejit
