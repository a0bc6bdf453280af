// CircuitBreaker: a remote that keeps failing is skipped for a growing interval and probed one
// call at a time; one success closes it.
#include <catch2/catch.hpp>

#include <daemon/remote/circuit_breaker.hpp>

namespace {

using jitcache::daemon::remote::CircuitBreaker;
using namespace std::chrono_literals;
using State = CircuitBreaker::State;

}  // namespace

TEST_CASE("circuit breaker: it opens after three failures in a row, not after two") {
  CircuitBreaker breaker(100ms, 1000ms);
  const auto t0 = CircuitBreaker::Clock::now();
  CHECK_FALSE(breaker.failed(t0));
  CHECK_FALSE(breaker.failed(t0));
  CHECK(breaker.allow(t0));
  CHECK(breaker.state() == State::closed);
  CHECK(breaker.failed(t0));
  CHECK(breaker.state() == State::open);
  CHECK_FALSE(breaker.allow(t0 + 50ms));
}

TEST_CASE("circuit breaker: a success between failures starts the count again") {
  CircuitBreaker breaker(100ms, 1000ms);
  const auto t0 = CircuitBreaker::Clock::now();
  breaker.failed(t0);
  breaker.failed(t0);
  breaker.succeeded();
  CHECK_FALSE(breaker.failed(t0));
  CHECK_FALSE(breaker.failed(t0));
  CHECK(breaker.state() == State::closed);
}

TEST_CASE("circuit breaker: once the interval passed one probe goes through, and its failure doubles the interval") {
  CircuitBreaker breaker(100ms, 1000ms);
  const auto t0 = CircuitBreaker::Clock::now();
  for (int i = 0; i < 3; ++i) breaker.failed(t0);
  CHECK(breaker.allow(t0 + 100ms));  // the probe
  CHECK(breaker.state() == State::half_open);
  CHECK_FALSE(breaker.allow(t0 + 100ms));  // only one probe at a time
  CHECK(breaker.failed(t0 + 110ms));
  CHECK(breaker.open_interval() == 200ms);
  CHECK_FALSE(breaker.allow(t0 + 250ms));
  CHECK(breaker.allow(t0 + 310ms));
  breaker.succeeded();
  CHECK(breaker.state() == State::closed);
  CHECK(breaker.open_interval() == 100ms);
}

TEST_CASE("circuit breaker: the interval grows up to its cap and no further") {
  CircuitBreaker breaker(100ms, 300ms);
  auto t = CircuitBreaker::Clock::now();
  for (int i = 0; i < 3; ++i) breaker.failed(t);
  for (int round = 0; round < 5; ++round) {
    t += breaker.open_interval();
    REQUIRE(breaker.allow(t));
    breaker.failed(t);
  }
  CHECK(breaker.open_interval() == 300ms);
}

TEST_CASE("circuit breaker: misses, rejections and too-large values do not count against a remote") {
  using jitcache::common::ErrorCode;
  CHECK(CircuitBreaker::counts_against(ErrorCode::timeout));
  CHECK(CircuitBreaker::counts_against(ErrorCode::unavailable));
  CHECK(CircuitBreaker::counts_against(ErrorCode::corrupt));
  CHECK(CircuitBreaker::counts_against(ErrorCode::io));
  CHECK_FALSE(CircuitBreaker::counts_against(ErrorCode::too_large));
  CHECK_FALSE(CircuitBreaker::counts_against(ErrorCode::unsupported));
}
