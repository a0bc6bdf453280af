// The compile service's counters, for the daemon's STATS (the daemon maps them to stats names).
// Thread safety: atomics updated with relaxed ordering from any thread; a reader sees each counter
// on its own, not one consistent instant.
#pragma once

#include <atomic>
#include <cstdint>

namespace jitcache::daemon::compile {

struct CompileCounters {
  using Counter = std::atomic<std::uint64_t>;

  Counter compiles{0};              // jobs a worker ran to an end (compiled, failed or refused by nvJitLink)
  Counter compile_failures{0};      // of those, the ones that ended in compile_error or worker_failed
  Counter compile_microseconds{0};  // wall time of those runs, worker start to reap, summed
  Counter single_flight_joins{0};   // submissions that joined a compile already queued or running
  Counter refused{0};               // submissions refused (before compiling, or by nvJitLink itself)
  Counter busy_rejections{0};       // submissions turned away `busy`: the queue was full, or as below
  Counter busy_per_tenant{0};       // of those, because their tenant had its share of slots or PTX bytes
  Counter negative_hits{0};         // submissions answered from a remembered failure
  Counter queue_length{0};          // compiles waiting for a worker now (gauge)
  Counter running{0};               // compiles running now (gauge)

  double compile_seconds() const {
    return static_cast<double>(compile_microseconds.load(std::memory_order_relaxed)) / 1e6;
  }

  static void add(Counter& c, std::uint64_t n = 1) { c.fetch_add(n, std::memory_order_relaxed); }
  static void sub(Counter& c, std::uint64_t n = 1) { c.fetch_sub(n, std::memory_order_relaxed); }
};

}  // namespace jitcache::daemon::compile
