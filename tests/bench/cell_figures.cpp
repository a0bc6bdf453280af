#include <tests/bench/cell_figures.hpp>

namespace jitcache::bench {

std::optional<double> CellFigures::throughput_ratio() const {
  if (!redis || redis->load.requests_per_second() <= 0) return std::nullopt;
  return jitcache.load.requests_per_second() / redis->load.requests_per_second();
}

std::optional<double> CellFigures::p99_ratio() const {
  if (!redis || redis->load.latency.p99_us <= 0) return std::nullopt;
  return jitcache.load.latency.p99_us / redis->load.latency.p99_us;
}

}  // namespace jitcache::bench
