// common/fair_share_ring.hpp: the bounds of the daemon's miss and eviction rings.
#include <catch2/catch.hpp>

#include <cstdint>
#include <vector>

#include <common/fair_share_ring.hpp>

using jitcache::common::FairShareRing;

namespace {

auto every = [](std::uint32_t, int) { return true; };

}  // namespace

TEST_CASE("fair share ring: it never holds more than its capacity and lists the newest first") {
  FairShareRing<int> ring(8, 8);
  for (int i = 0; i < 100; ++i) ring.push(static_cast<std::uint32_t>(i % 3), i);
  CHECK(ring.size() == 8);
  CHECK(ring.newest(3, every) == std::vector<int>{99, 98, 97});
  CHECK(ring.newest(100, every).size() == 8);
  CHECK(ring.newest(100, every).back() == 92);
}

TEST_CASE("fair share ring: once full, an owner at its share replaces its own oldest, not the others'") {
  FairShareRing<int> ring(8, 2);
  for (int i = 0; i < 6; ++i) ring.push(1, i);        // uid 1's records
  for (int i = 100; i < 102; ++i) ring.push(2, i);    // uid 2's: the ring is full now
  for (int i = 1000; i < 2000; ++i) ring.push(3, i);  // uid 3 misses on purpose, fast
  CHECK(ring.size() == 8);
  CHECK(ring.held_by(3) == 2);
  CHECK(ring.held_by(2) == 2);  // untouched: 3 cycles through its own share
  CHECK(ring.held_by(1) == 4);  // lost only the two slots 3 took while under its share
  auto of = [&](std::uint32_t owner) { return ring.newest(8, [owner](std::uint32_t o, int) { return o == owner; }); };
  CHECK(of(3) == std::vector<int>{1999, 1998});
  CHECK(of(2) == std::vector<int>{101, 100});
  CHECK(of(1) == std::vector<int>{5, 4, 3, 2});
}

TEST_CASE("fair share ring: an owner under its share pushes out the oldest record of anyone") {
  FairShareRing<int> ring(4, 2);
  for (int i = 0; i < 4; ++i) ring.push(1, i);
  ring.push(2, 10);
  CHECK(ring.held_by(1) == 3);
  CHECK(ring.newest(4, every) == std::vector<int>{10, 3, 2, 1});
}
