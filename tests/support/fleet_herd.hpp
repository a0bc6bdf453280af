// A cold herd over a fleet of real daemons (tests/support/fleet_hosts.hpp): every host asks for the
// same fresh keys at nearly the same moment, one host after another `stagger` apart, with the
// builder(s) at a chosen place in that order. Used by the fleet herd tests and by bench_fleet, so
// it throws std::runtime_error rather than asserting.
// Thread safety: one caller; it runs one client thread per host and key and joins them.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include <proto/compile_messages.hpp>
#include <proto/jit_options.hpp>
#include <tests/support/fleet_hosts.hpp>

namespace jitcache::testing {

// Where the builders come in the order the hosts ask.
enum class BuilderArrives : std::uint8_t { first, middle, last };

inline const char* arrival_name(BuilderArrives arrives) {
  switch (arrives) {
    case BuilderArrives::first: return "first";
    case BuilderArrives::middle: return "middle";
    case BuilderArrives::last: return "last";
  }
  return "?";
}

// The hosts' indices in the order they ask: `builders` are hosts [0, builders), the others
// consumers, and the builders come first, in the middle, or last.
inline std::vector<std::size_t> arrival_order(std::size_t hosts, std::size_t builders, BuilderArrives arrives) {
  std::vector<std::size_t> consumers;
  for (std::size_t i = builders; i < hosts; ++i) consumers.push_back(i);
  const std::size_t at = arrives == BuilderArrives::first  ? 0
                         : arrives == BuilderArrives::last ? consumers.size()
                                                           : consumers.size() / 2;
  std::vector<std::size_t> order(consumers.begin(), consumers.begin() + static_cast<std::ptrdiff_t>(at));
  for (std::size_t b = 0; b < builders; ++b) order.push_back(b);
  order.insert(order.end(), consumers.begin() + static_cast<std::ptrdiff_t>(at), consumers.end());
  return order;
}

// The fault worker's PTX (tests/fakes/fault_compile_worker.cpp) for a compile of `ms`; `tag` makes
// the key fresh.
inline std::string slow_ptx(unsigned ms, const std::string& tag) {
  return "slow " + std::to_string(ms) + "\n// " + tag + "\n";
}

struct HerdResult {
  std::uint64_t compiles = 0;  // fleet-wide, over all keys, by the hosts' `compiles` stats
  std::uint64_t answered = 0;  // COMPILE answers with an image
  double last_served_ms = 0;   // from the first request to the last answer
};

// Each host in `order` sends a COMPILE of every PTX in `ptx` (one client thread per host and key),
// the n-th host of the order n * stagger after the first. `counted`: the hosts whose compiles count
// (e.g. all but one killed on purpose).
inline HerdResult run_herd(std::vector<FleetHost>& hosts, const std::vector<std::size_t>& order,
                           const std::vector<std::string>& ptx, std::chrono::milliseconds stagger,
                           std::chrono::seconds limit = std::chrono::seconds(120)) {
  using Clock = std::chrono::steady_clock;
  std::vector<std::uint64_t> before;
  for (auto& host : hosts) before.push_back(host_stat(host, "compiles"));
  std::atomic<std::uint64_t> answered{0};
  std::atomic<std::int64_t> last_us{0};
  const auto start = Clock::now() + std::chrono::milliseconds(50);
  std::vector<std::thread> threads;
  for (std::size_t place = 0; place < order.size(); ++place) {
    for (const std::string& text : ptx) {
      threads.emplace_back([&, place, h = order[place]] {
        auto client = hosts[h].daemon->client();
        const auto request = fleet_compile_request(text);
        std::this_thread::sleep_until(start + stagger * static_cast<int>(place));
        auto answer = client.compile(request, limit);
        if (answer && answer->kind == client::transport::CompileAnswer::Kind::compiled && answer->image) ++answered;
        const auto us = std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - start).count();
        std::int64_t seen = last_us.load();
        while (us > seen && !last_us.compare_exchange_weak(seen, us)) {
        }
      });
    }
  }
  for (auto& t : threads) t.join();
  HerdResult result;
  for (std::size_t h = 0; h < hosts.size(); ++h) result.compiles += host_stat(hosts[h], "compiles") - before[h];
  result.answered = answered;
  result.last_served_ms = static_cast<double>(last_us.load()) / 1000.0;
  return result;
}

}  // namespace jitcache::testing
