#include <tests/bench/latency_recorder.hpp>

#include <algorithm>
#include <cmath>
#include <numeric>

namespace jitcache::bench {

namespace {

constexpr double k_ns_per_us = 1000.0;

// Nearest rank: the smallest sample with at least `fraction` of all samples at or below it.
double percentile_us(const std::vector<std::uint64_t>& sorted, double fraction) {
  const auto n = static_cast<double>(sorted.size());
  auto rank = static_cast<std::size_t>(std::ceil(fraction * n));
  rank = std::clamp<std::size_t>(rank, 1, sorted.size());
  return static_cast<double>(sorted[rank - 1]) / k_ns_per_us;
}

}  // namespace

LatencyRecorder::LatencyRecorder(std::size_t expected_samples) { m_samples_ns.reserve(expected_samples); }

void LatencyRecorder::merge(const LatencyRecorder& other) {
  m_samples_ns.insert(m_samples_ns.end(), other.m_samples_ns.begin(), other.m_samples_ns.end());
}

LatencySummary LatencyRecorder::summarize() {
  LatencySummary summary;
  if (m_samples_ns.empty()) return summary;
  std::sort(m_samples_ns.begin(), m_samples_ns.end());
  summary.count = m_samples_ns.size();
  const long double total = std::accumulate(m_samples_ns.begin(), m_samples_ns.end(), 0.0L);
  summary.mean_us = static_cast<double>(total / static_cast<long double>(summary.count)) / k_ns_per_us;
  summary.p50_us = percentile_us(m_samples_ns, 0.50);
  summary.p99_us = percentile_us(m_samples_ns, 0.99);
  summary.p999_us = percentile_us(m_samples_ns, 0.999);
  summary.max_us = static_cast<double>(m_samples_ns.back()) / k_ns_per_us;
  return summary;
}

}  // namespace jitcache::bench
