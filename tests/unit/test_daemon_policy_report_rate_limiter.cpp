// The per-uid rate of failure reports (daemon/policy/report_rate_limiter.hpp): a minute's worth at
// once, then refilled over time, each uid on its own; 0 means no limit.
#include <catch2/catch.hpp>

#include <daemon/policy/report_rate_limiter.hpp>

using jitcache::daemon::policy::ReportRateLimiter;
using namespace std::chrono_literals;

TEST_CASE("report rate limiter: a uid gets per_minute reports at once, then one more per 60/per_minute seconds") {
  ReportRateLimiter limiter(6);
  const auto t0 = ReportRateLimiter::Clock::time_point{} + 1h;
  for (int i = 0; i < 6; ++i) CHECK(limiter.allow(1000, t0));
  CHECK_FALSE(limiter.allow(1000, t0));
  CHECK_FALSE(limiter.allow(1000, t0 + 9s));
  CHECK(limiter.allow(1000, t0 + 10s));
  CHECK_FALSE(limiter.allow(1000, t0 + 10s));
  // A long pause refills the bucket to its size, never beyond.
  for (int i = 0; i < 6; ++i) CHECK(limiter.allow(1000, t0 + 1h));
  CHECK_FALSE(limiter.allow(1000, t0 + 1h));
}

TEST_CASE("report rate limiter: one uid's flood leaves another uid's reports alone") {
  ReportRateLimiter limiter(3);
  const auto t0 = ReportRateLimiter::Clock::time_point{} + 1h;
  int allowed = 0;
  for (int i = 0; i < 10'000; ++i) allowed += limiter.allow(2000, t0) ? 1 : 0;
  CHECK(allowed == 3);
  CHECK(limiter.allow(1000, t0));
}

TEST_CASE("report rate limiter: 0 per minute means no limit") {
  ReportRateLimiter limiter(0);
  for (int i = 0; i < 1000; ++i) REQUIRE(limiter.allow(1000));
}
