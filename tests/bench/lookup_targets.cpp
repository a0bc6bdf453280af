#include <tests/bench/lookup_targets.hpp>

#include <cstdio>
#include <string>

namespace jitcache::bench {

namespace {

// The targets of docs/benchmarks.md "LOOKUP vs Redis GET": a 4 KB LOOKUP 1.2 times as fast as a
// Redis GET of the same bytes, at 8 and at 64 clients, for at most 1.2 times Redis's CPU per GET
// (before: 1.0 and 2 times).
constexpr std::size_t k_small_image = 4096;
constexpr std::size_t k_medium_image = 194560;
constexpr unsigned k_few_clients = 8;
constexpr unsigned k_many_clients = 64;
constexpr double k_min_throughput_ratio = 1.2;
constexpr double k_max_cpu_ratio = 1.2;
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

  for (const unsigned clients : {k_few_clients, k_many_clients}) {
    const std::string cell_name = "4 KB, " + std::to_string(clients) + " clients";
    TargetCheck throughput{"LOOKUP throughput >= 1.2x Redis GET, " + cell_name, std::nullopt, "-"};
    TargetCheck cpu{"daemon CPU per LOOKUP <= 1.2x Redis's per GET, " + cell_name, std::nullopt, "-"};
    if (const auto* cell = find_cell(cells, k_small_image, clients);
        cell != nullptr && usable(cell->jitcache) && cell->redis && usable(*cell->redis)) {
      if (const auto ratio = cell->throughput_ratio()) {
        throughput.met = *ratio >= k_min_throughput_ratio;
        throughput.measured = format("%.2fx", *ratio);
      }
      const auto& ours = cell->jitcache.server_cpu_us_per_request;
      const auto& theirs = cell->redis->server_cpu_us_per_request;
      if (ours && theirs && *theirs > 0) {
        cpu.met = *ours <= k_max_cpu_ratio * *theirs;
        cpu.measured = format("%.2fx", *ours / *theirs);
      }
    }
    checks.push_back(throughput);
    checks.push_back(cpu);
  }

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
