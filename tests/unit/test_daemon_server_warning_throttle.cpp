// WarningThrottle (daemon/server/warning_throttle.hpp): the first occurrence is logged, a burst
// within the interval is not, and the next one logged says how many there were.
#include <catch2/catch.hpp>

#include <chrono>

#include <daemon/server/warning_throttle.hpp>

using jitcache::daemon::server::WarningThrottle;
using namespace std::chrono_literals;

TEST_CASE("warning throttle: one warning an interval, counting the ones kept quiet") {
  WarningThrottle throttle(10s);
  const auto start = WarningThrottle::Clock::now();
  CHECK(throttle.admit(start) == 1);
  for (int i = 1; i <= 400; ++i) REQUIRE(throttle.admit(start + i * 10ms) == 0);
  CHECK(throttle.admit(start + 10s) == 401);
  CHECK(throttle.admit(start + 11s) == 0);
  CHECK(throttle.admit(start + 21s) == 2);
}
