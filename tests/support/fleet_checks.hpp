// Checks the fleet tests make of a host (tests/support/fleet_hosts.hpp), with Catch's assertions.
// Thread safety: one call per host at a time.
#pragma once

#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>

#include <tests/support/fleet_hosts.hpp>
#include <tests/support/sample_entries.hpp>

namespace jitcache::testing {

// The slowest of `count` LOOKUPs of keys nobody has, in milliseconds; each must succeed as a miss.
inline double slowest_miss_ms(FleetHost& host, std::uint64_t first_seed, int count) {
  auto client = host.daemon->client();
  double slowest = 0;
  for (int i = 0; i < count; ++i) {
    const auto start = std::chrono::steady_clock::now();
    auto found = client.lookup(sample_key(first_seed + static_cast<std::uint64_t>(i)));
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    REQUIRE(found.ok());
    CHECK_FALSE(found->has_value());
    slowest = std::max(slowest, ms);
  }
  return slowest;
}

}  // namespace jitcache::testing
