// AskTracker (daemon/rejit/ask_tracker.hpp): the first ask of a (driver, arch) pair is a sighting,
// later ones are not; a driver the store knows is never new; the pairs remembered are bounded.
#include <catch2/catch.hpp>

#include <daemon/rejit/ask_tracker.hpp>

using jitcache::daemon::rejit::AskTracker;

TEST_CASE("rejit ask tracker: only a pair's first ask is a sighting, and a driver the store knows is never new") {
  AskTracker tracker;
  tracker.know_driver(13000, "580.1");

  auto known = tracker.note("sm_90", 13000, "580.1");
  REQUIRE(known);
  CHECK_FALSE(known->new_driver);
  CHECK_FALSE(tracker.note("sm_90", 13000, "580.1"));

  auto upgraded = tracker.note("sm_90", 13010, "590.2");
  REQUIRE(upgraded);
  CHECK(upgraded->new_driver);
  CHECK(upgraded->arch == "sm_90");
  CHECK(upgraded->driver_api == 13010);
  CHECK(upgraded->driver_build == "590.2");
  CHECK_FALSE(tracker.note("sm_90", 13010, "590.2"));

  // Another arch of a driver already asked for: a sighting, the driver no longer new.
  auto other_arch = tracker.note("sm_100", 13010, "590.2");
  REQUIRE(other_arch);
  CHECK_FALSE(other_arch->new_driver);
  // The same API version with another build is another driver.
  auto rebuilt = tracker.note("sm_90", 13010, "590.3");
  REQUIRE(rebuilt);
  CHECK(rebuilt->new_driver);
}

TEST_CASE("rejit ask tracker: past its bound no pair is a sighting") {
  AskTracker tracker(2);
  CHECK(tracker.note("sm_90", 13000, "1"));
  CHECK(tracker.note("sm_90", 13000, "2"));
  CHECK_FALSE(tracker.note("sm_90", 13000, "3"));
  CHECK_FALSE(tracker.note("sm_90", 13000, "1"));
}

TEST_CASE("rejit ask tracker: an untrusted uid adds at most its share of pairs, and a trusted caller is not limited") {
  AskTracker tracker(100, 2);
  CHECK(tracker.note("sm_90", 13000, "1", 1000u));
  auto second = tracker.note("sm_90", 13000, "2", 1000u);
  REQUIRE(second);
  CHECK(second->asker == 1000u);
  // Its third invented driver is neither remembered nor a sighting ...
  CHECK_FALSE(tracker.note("sm_90", 13000, "3", 1000u));
  // ... so the real upgrade, asked for by someone else, still is.
  auto upgrade = tracker.note("sm_90", 13000, "3", 1001u);
  REQUIRE(upgrade);
  CHECK(upgrade->new_driver);
  CHECK(tracker.note("sm_90", 13000, "4"));
  CHECK(tracker.note("sm_90", 13000, "5"));
  CHECK(tracker.note("sm_90", 13000, "6"));
}
