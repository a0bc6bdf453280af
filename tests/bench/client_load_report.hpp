// Figures of bench_client_load: the samples of each load path for one corpus module, their
// median/min/max, the table that prints them and the targets printed beside them (never asserted:
// docs/benchmarks.md). Thread safety: plain values and free functions.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace jitcache::bench {

// Nanosecond samples of one path; each from a process of its own.
using Samples = std::vector<std::uint64_t>;

struct Spread {
  std::size_t n = 0;
  double median_ms = 0;
  double min_ms = 0;
  double max_ms = 0;
};

// nullopt for no samples; the median of an even count is the mean of the middle two.
std::optional<Spread> spread_of(Samples samples);

struct ModuleFigures {
  std::string name;  // e.g. "cub_kernels.ptx"
  std::size_t ptx_bytes = 0;
  std::size_t cubin_bytes = 0;  // the image the cache stores and (a) loads
  std::size_t kernels = 0;
  std::string miss_outcome;          // what the priming load was (compiled_locally, ...)
  std::uint64_t miss_ns = 0;         // and what it cost (cold: JIT, PUT)
  std::uint64_t miss_lookups = 0;    // the LOOKUPs it sent (jitcache_counters.lookups)
  std::uint64_t miss_ns_lookup = 0;  // its ns_lookup: connect, LOOKUP and HELLO

  Samples hit;                        // jitcache hit: published copy or LOOKUP, checks, cuModuleLoadData
  std::size_t hits_published = 0;     // of `hit`, the samples loaded from the published copy
  std::size_t published_rejects = 0;  // published copies the hit samples refused (should be 0)
  Samples hit_socket;                 // jitcache hit with JITCACHE_PUBLISHED=0: always over the socket
  Samples hit_key, hit_lookup, hit_load, hit_setup, hit_classify, hit_total;  // its steps (jitcache_last_load_info)
  Samples cubin;                      // (a) cuModuleLoadData of the finished cubin in memory
  Samples driver_warm;                // (b) cuModuleLoadData(PTX), the driver's compute cache warm
  Samples driver_cold;                // (c) cuModuleLoadData(PTX), CUDA_CACHE_DISABLE=1
  Samples fallback;                   // (d) jitcache with no daemon (driver cache warm, as in (b))
  Samples fallback_overhead;          // its ns_key + ns_lookup: what the dead daemon costs
  std::vector<std::string> failures;  // samples that failed or had the wrong outcome
};

struct TargetCheck {
  std::string module;
  std::string target;       // e.g. "hit <= 0.5x the warm driver cache"
  std::string measured;     // e.g. "0.31x (2.1 ms vs 6.8 ms)"
  std::optional<bool> met;  // nullopt when a figure is missing
};

void print_module(std::ostream& out, const ModuleFigures& figures);
std::vector<TargetCheck> check_targets(const ModuleFigures& figures);
void print_targets(std::ostream& out, const std::vector<TargetCheck>& checks);

}  // namespace jitcache::bench
