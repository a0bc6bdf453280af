// The daemon's counters (daemon/stats/counters.hpp) saturate: a sum of client-chosen values such as
// compile_microseconds_saved stops at 2^64 - 1 instead of wrapping to a small number, also when
// threads add at once.
#include <catch2/catch.hpp>

#include <cstdint>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include <daemon/stats/counter_table.hpp>
#include <daemon/stats/counters.hpp>

using namespace jitcache::daemon;

namespace {

constexpr std::uint64_t k_max = std::numeric_limits<std::uint64_t>::max();

// What STATS reports under `name` (the figure table, daemon/stats/counter_table.hpp).
std::uint64_t reported(const stats::Counters& counters, const std::string& name) {
  const store::Totals totals;
  for (const auto& [n, v] : stats::stats_values(stats::FigureSources{counters, &totals})) {
    if (n == name) return v;
  }
  FAIL("no counter " << name);
  return 0;
}

}  // namespace

TEST_CASE("counters: additions past 2^64 - 1 stay at 2^64 - 1, and smaller ones add exactly") {
  stats::Counters counters;
  stats::Counters::add(counters.hits);
  stats::Counters::add(counters.hits, 41);
  CHECK(reported(counters, "hits") == 42);

  constexpr std::uint64_t k_longest_compile = std::numeric_limits<std::int64_t>::max();
  for (int i = 0; i < 3; ++i) stats::Counters::add(counters.compile_microseconds_saved, k_longest_compile);
  CHECK(counters.compile_microseconds_saved.load() == k_max);
  stats::Counters::add(counters.compile_microseconds_saved);
  CHECK(counters.compile_microseconds_saved.load() == k_max);

  stats::Counters::add(counters.put_bytes, k_max - 1);
  stats::Counters::add(counters.put_bytes, 1);
  CHECK(reported(counters, "put_bytes") == k_max);
}

TEST_CASE("counters: concurrent additions are all counted below the maximum and saturate above it") {
  stats::Counters counters;
  constexpr int k_threads = 4;
  constexpr int k_adds = 20000;
  stats::Counters::add(counters.bytes_served, k_max - 1000);
  std::vector<std::thread> threads;
  for (int t = 0; t < k_threads; ++t) {
    threads.emplace_back([&counters] {
      for (int i = 0; i < k_adds; ++i) {
        stats::Counters::add(counters.requests);
        stats::Counters::add(counters.bytes_served, 7);
      }
    });
  }
  for (auto& thread : threads) thread.join();
  CHECK(reported(counters, "requests") == std::uint64_t{k_threads} * k_adds);
  CHECK(reported(counters, "bytes_served") == k_max);
}
