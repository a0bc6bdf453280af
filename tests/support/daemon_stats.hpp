// One STATS value of a running daemon, for tests that assert on counters (conventions: integration
// tests check the stats counters). Header-only because it asserts with Catch2, which the support
// library does not link. Thread safety: as DaemonClient (one per thread).
#pragma once

#include <catch2/catch.hpp>

#include <cstdint>
#include <string>

#include <client/src/transport/daemon_client.hpp>

namespace jitcache::testing {

inline std::uint64_t stat_value(client::transport::DaemonClient& client, const std::string& name) {
  auto stats = client.stats();
  REQUIRE(stats);
  for (const auto& [n, v] : stats->values) {
    if (n == name) return v;
  }
  FAIL("no stat named " << name);
  return 0;
}

}  // namespace jitcache::testing
