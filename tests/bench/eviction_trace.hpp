// Request traces for bench_eviction (docs/benchmarks.md "Eviction policy"): which cache entry each
// load asks for, and what each entry costs to keep (stored bytes) and to miss (compile time).
//
// Both traces draw popularity from a Zipf law over ranks, with the entries shuffled over the ranks,
// so popularity is independent of size and cost; and both churn: at each of `phases` boundaries a
// fraction of the ranks get a new entry (a rebuilt program, a new arch or option set), so what was
// popular stops being asked for, which is where recency matters.
//
// Generated with a fixed generator (SplitMix64, Box-Muller) rather than <random>'s distributions,
// whose output differs between standard libraries: one seed gives one trace everywhere.
//
// Thread safety: value types and pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace jitcache::bench {

struct TraceEntry {
  std::uint64_t stored_bytes = 0;  // what it takes in the store (its image is stored raw)
  std::uint64_t compile_us = 0;    // what a miss costs, recorded with the entry as compile_time_us
  int module = -1;                 // corpus trace: the index of its module; -1: synthetic
};

struct Trace {
  std::string name;
  std::vector<TraceEntry> entries;
  std::vector<std::uint32_t> requests;  // indices into entries, in order
};

struct PopularitySpec {
  std::uint64_t requests = 20'000;
  double zipf_exponent = 0.9;
  double churn = 0.1;  // fraction of the ranks given a new entry at each phase boundary
  unsigned phases = 10;
  std::uint64_t seed = 1;
};

// (a) `ranks` entries at a time with log-normal stored sizes (median 64 KiB, 4 KiB to 8 MiB) and
// compile times that grow with size (about 10 ms per 4 KiB to 5 s per 1.6 MB, the corpus's range,
// with a per-entry log-normal spread), within 20 ms to 7 s.
Trace synthetic_trace(std::uint32_t ranks, const PopularitySpec& spec);

// One module of the corpus: its cubin's stored size and its compile time.
struct CorpusModule {
  std::string name;
  std::uint64_t stored_bytes = 0;
  std::uint64_t compile_us = 0;
};

// (b) `variants` entries per module at a time (a module is built for several archs, option sets and
// driver builds, each its own entry of the module's size and compile time).
Trace corpus_trace(const std::vector<CorpusModule>& modules, std::uint32_t variants, const PopularitySpec& spec);

// The stored bytes of every entry the trace asks for: what a store without limit would hold.
std::uint64_t working_set_bytes(const Trace& trace);

}  // namespace jitcache::bench
