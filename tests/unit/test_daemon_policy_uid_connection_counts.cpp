// Connections per uid (daemon/policy/uid_connection_counts.hpp): each uid up to the limit,
// independent of the others, with slots given back.
#include <catch2/catch.hpp>

#include <daemon/policy/uid_connection_counts.hpp>

using jitcache::daemon::policy::UidConnectionCounts;

TEST_CASE("uid connection counts: a uid gets the limit's number of slots, another uid its own, and release frees one") {
  UidConnectionCounts counts(2);
  CHECK(counts.try_acquire(1000));
  CHECK(counts.try_acquire(1000));
  CHECK_FALSE(counts.try_acquire(1000));
  CHECK(counts.try_acquire(2000));
  CHECK(counts.open(1000) == 2);
  counts.release(1000);
  CHECK(counts.open(1000) == 1);
  CHECK(counts.try_acquire(1000));
  counts.release(1000);
  counts.release(1000);
  counts.release(1000);  // one too many is ignored
  CHECK(counts.open(1000) == 0);
}

TEST_CASE("uid connection counts: a limit of 0 is no limit") {
  UidConnectionCounts counts(0);
  for (int i = 0; i < 10'000; ++i) REQUIRE(counts.try_acquire(1000));
  CHECK(counts.open(1000) == 10'000);
}
