// Result and its propagation macros (common/result.hpp): JITCACHE_TRY passes a failure on and goes
// on after a success; JITCACHE_TRY_ASSIGN also hands over the value; each evaluates its expression
// once and stops at the first failure.
#include <common/result.hpp>

#include <memory>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

using jitcache::common::Error;
using jitcache::common::ErrorCode;
using jitcache::common::make_error;
using jitcache::common::Result;

namespace {

// Records what ran, so a test can see where a chain stopped.
struct Steps {
  std::vector<std::string> ran;

  Result<void> step(std::string name, bool succeed) {
    ran.push_back(name);
    if (!succeed) return make_error(ErrorCode::io, name + " failed");
    return {};
  }
  Result<int> number(std::string name, Result<int> outcome) {
    ran.push_back(std::move(name));
    return outcome;
  }
};

Result<void> two_steps(Steps& steps, bool first, bool second) {
  JITCACHE_TRY(steps.step("first", first));
  JITCACHE_TRY(steps.step("second", second));
  steps.ran.push_back("end");
  return {};
}

Result<int> sum_of_two(Steps& steps, Result<int> a, Result<int> b) {
  JITCACHE_TRY_ASSIGN(const int x, steps.number("a", std::move(a)));
  JITCACHE_TRY_ASSIGN(const int y, steps.number("b", std::move(b)));
  return x + y;
}

}  // namespace

TEST_CASE("result: JITCACHE_TRY goes on past successes and returns nothing of its own") {
  Steps steps;
  auto outcome = two_steps(steps, true, true);
  CHECK(outcome.ok());
  CHECK(steps.ran == std::vector<std::string>{"first", "second", "end"});
}

TEST_CASE("result: JITCACHE_TRY returns the first failure, message and code intact, and runs nothing after it") {
  Steps steps;
  auto outcome = two_steps(steps, false, true);
  REQUIRE_FALSE(outcome.ok());
  CHECK(outcome.error().code == ErrorCode::io);
  CHECK(outcome.error().message == "first failed");
  CHECK(steps.ran == std::vector<std::string>{"first"});

  Steps later;
  auto second = two_steps(later, true, false);
  REQUIRE_FALSE(second.ok());
  CHECK(second.error().message == "second failed");
  CHECK(later.ran == std::vector<std::string>{"first", "second"});
}

TEST_CASE("result: JITCACHE_TRY_ASSIGN declares the values of successes, twice in one function") {
  Steps steps;
  auto sum = sum_of_two(steps, 2, 40);
  REQUIRE(sum.ok());
  CHECK(*sum == 42);
  CHECK(steps.ran == std::vector<std::string>{"a", "b"});
}

TEST_CASE("result: JITCACHE_TRY_ASSIGN returns a failure into a Result of another type and stops there") {
  Steps steps;
  auto sum = sum_of_two(steps, make_error(ErrorCode::corrupt, "a is corrupt"), 40);
  REQUIRE_FALSE(sum.ok());
  CHECK(sum.error().code == ErrorCode::corrupt);
  CHECK(sum.error().message == "a is corrupt");
  CHECK(steps.ran == std::vector<std::string>{"a"});

  auto as_void = [&]() -> Result<void> {
    JITCACHE_TRY_ASSIGN(const int unused, steps.number("c", make_error(ErrorCode::timeout, "c timed out")));
    (void)unused;
    return {};
  }();
  REQUIRE_FALSE(as_void.ok());
  CHECK(as_void.error().code == ErrorCode::timeout);
}

TEST_CASE("result: JITCACHE_TRY_ASSIGN moves a move-only value and assigns to an existing variable") {
  auto make = [](bool succeed) -> Result<std::unique_ptr<int>> {
    if (!succeed) return make_error(ErrorCode::no_space, "full");
    return std::make_unique<int>(7);
  };
  auto take = [&](bool succeed) -> Result<int> {
    std::unique_ptr<int> held;
    JITCACHE_TRY_ASSIGN(held, make(succeed));
    return *held;
  };
  CHECK(*take(true) == 7);
  REQUIRE_FALSE(take(false).ok());
  CHECK(take(false).error().code == ErrorCode::no_space);
}

TEST_CASE("result: a Result named by the macros is read, not emptied: its error stays for the caller") {
  const Result<int> failed = make_error(ErrorCode::unavailable, "daemon down");
  auto pass_on = [&]() -> Result<void> {
    JITCACHE_TRY(failed);
    return {};
  };
  auto outcome = pass_on();
  REQUIRE_FALSE(outcome.ok());
  CHECK(outcome.error().message == "daemon down");
  CHECK(failed.error().message == "daemon down");

  Result<std::string> named = std::string("kept");
  auto copy_out = [&]() -> Result<std::string> {
    JITCACHE_TRY_ASSIGN(std::string value, named);
    return value;
  };
  CHECK(*copy_out() == "kept");
  CHECK(*named == "kept");
}

TEST_CASE("result: an Error taken from a temporary Result is moved out whole") {
  auto failing = []() -> Result<int> { return Error{ErrorCode::too_large, "over the limit", 9}; };
  const Error error = failing().error();
  CHECK(error.code == ErrorCode::too_large);
  CHECK(error.message == "over the limit");
  CHECK(error.reply_status == 9);
}
