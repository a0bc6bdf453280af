// Per-request latencies of one benchmark cell, kept as every sample so that percentiles are exact
// rather than bucketed. Thread safety: one recorder per client thread; merge() them on one thread
// once the client threads have ended.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace jitcache::bench {

struct LatencySummary {
  std::uint64_t count = 0;
  double mean_us = 0;
  double p50_us = 0;
  double p99_us = 0;
  double p999_us = 0;
  double max_us = 0;
};

class LatencyRecorder {
 public:
  // Rationale: reserving up front keeps most vector growth (a copy of every sample so far) out of
  // the request loop; a cell that outgrows it pays one amortised copy between two requests.
  explicit LatencyRecorder(std::size_t expected_samples = std::size_t{1} << 16);

  void record(std::chrono::nanoseconds latency) { m_samples_ns.push_back(static_cast<std::uint64_t>(latency.count())); }
  void merge(const LatencyRecorder& other);
  std::size_t count() const { return m_samples_ns.size(); }

  // Nearest-rank percentiles over all samples (sorts them).
  LatencySummary summarize();

 private:
  std::vector<std::uint64_t> m_samples_ns;
};

}  // namespace jitcache::bench
