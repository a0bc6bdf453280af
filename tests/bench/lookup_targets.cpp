#include <tests/bench/lookup_targets.hpp>

#include <cstdio>

namespace jitcache::bench {

namespace {

constexpr std::size_t k_small_image = 4096;
constexpr std::size_t k_medium_image = 194560;
constexpr unsigned k_many_clients = 64;
constexpr double k_min_throughput_ratio = 0.5;
constexpr double k_max_p99_us = 2000.0;

const CellFigures* find_cell(const std::vector<CellFigures>& cells, std::size_t size, unsigned clients) {
  for (const auto& cell : cells) {
    if (cell.image_size == size && cell.clients == clients) return &cell;
  }
  return nullptr;
}

std::string format(const char* pattern, double value) {
  char text[64];
  std::snprintf(text, sizeof(text), pattern, value);
  return text;
}

// A cell whose clients failed has no trustworthy figure to judge.
bool usable(const ServerFigures& figures) { return figures.load.failures == 0 && figures.load.requests > 0; }

}  // namespace

std::vector<TargetCheck> check_lookup_targets(const std::vector<CellFigures>& cells) {
  std::vector<TargetCheck> checks;

  TargetCheck throughput{"LOOKUP throughput >= 0.5x Redis GET, 4 KB, 64 clients", std::nullopt, "-"};
  if (const auto* cell = find_cell(cells, k_small_image, k_many_clients);
      cell != nullptr && usable(cell->jitcache) && cell->redis && usable(*cell->redis)) {
    if (const auto ratio = cell->throughput_ratio()) {
      throughput.met = *ratio >= k_min_throughput_ratio;
      throughput.measured = format("%.2fx", *ratio);
    }
  }
  checks.push_back(throughput);

  TargetCheck latency{"LOOKUP p99 < 2 ms, 190 KB, 64 clients", std::nullopt, "-"};
  if (const auto* cell = find_cell(cells, k_medium_image, k_many_clients); cell != nullptr && usable(cell->jitcache)) {
    latency.met = cell->jitcache.load.latency.p99_us < k_max_p99_us;
    latency.measured = format("%.0f us", cell->jitcache.load.latency.p99_us);
  }
  checks.push_back(latency);
  return checks;
}

std::string verdict(const TargetCheck& check) {
  if (!check.met) return "not measured";
  return *check.met ? "PASS" : "MISS";
}

}  // namespace jitcache::bench
