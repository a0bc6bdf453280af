// The in-memory logs of the usage flush (daemon/store/usage_log.hpp, driver_log.hpp): what they keep
// between flushes is bounded, also when a flush fails and puts everything back, and what they drop
// is counted.
#include <catch2/catch.hpp>

#include <string>

#include <daemon/store/driver_log.hpp>
#include <daemon/store/usage_log.hpp>

using namespace jitcache;
using daemon::store::DriverLog;
using daemon::store::UsageLog;

namespace {

proto::Digest256 key(unsigned n) {
  proto::Digest256 id;
  id.bytes[0] = static_cast<std::uint8_t>(n);
  id.bytes[1] = static_cast<std::uint8_t>(n >> 8);
  return id;
}

}  // namespace

TEST_CASE("usage log: past its limit a new entry's hit is dropped and counted, an entry already kept still counts") {
  UsageLog log(4);
  for (unsigned n = 0; n < 10; ++n) log.record(key(n), 0, 1000 + n);
  CHECK(log.pending() == 4);
  CHECK(log.dropped() == 6);
  log.record(key(0), 0, 5000);  // kept: its hits add up
  CHECK(log.dropped() == 6);

  // A failed flush puts its records back; hits recorded meanwhile fill the room first.
  auto taken = log.take();
  REQUIRE(taken.size() == 4);
  CHECK(log.pending() == 0);
  for (unsigned n = 100; n < 102; ++n) log.record(key(n), 0, 6000);
  log.restore(taken);
  CHECK(log.pending() == 4);
  CHECK(log.dropped() == 8);
  std::uint64_t hits = 0;
  for (const auto& record : log.take()) hits += record.hits;
  // The two new entries' hits, and those of two of the four put back (entry 0 has 2, the others 1).
  CHECK(hits >= 4);
  CHECK(hits <= 5);
}

TEST_CASE(
    "driver log: drivers only asked for are bounded apart from those served, and a failed flush keeps the bound") {
  DriverLog log(3, 100);
  for (int i = 0; i < 50; ++i) log.record_asked(13000, "made.up." + std::to_string(i), 1000);
  log.record_served(13000, "580.159.04", 2000);
  log.record_asked(13000, "made.up.0", 3000);  // kept already: its time moves on
  CHECK(log.pending() == 4);
  CHECK(log.dropped() == 47);

  auto taken = log.take();
  REQUIRE(taken.size() == 4);
  for (int i = 50; i < 60; ++i) log.record_asked(13000, "made.up." + std::to_string(i), 4000);
  log.record_served(13000, "590.10", 4000);
  log.restore(taken);
  CHECK(log.pending() == 5);  // 3 asked, 2 served
  CHECK(log.dropped() == 47 + 7 + 3);
  bool real_driver_kept = false;
  for (const auto& ask : log.take()) {
    if (ask.driver_build == "580.159.04") real_driver_kept = ask.served && ask.last_asked_at_ms == 2000;
  }
  CHECK(real_driver_kept);
}
