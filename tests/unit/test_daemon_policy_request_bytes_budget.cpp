// In-flight request bytes (daemon/policy/request_bytes_budget.hpp): a uid up to its budget, all
// uids together up to the total, nothing taken by a refusal, and holds that give their bytes back.
#include <catch2/catch.hpp>

#include <cstdint>
#include <limits>

#include <daemon/policy/request_bytes_budget.hpp>

using jitcache::daemon::policy::RequestBytesBudget;
using Refusal = RequestBytesBudget::Refusal;

TEST_CASE("request bytes budget: a uid is refused past its budget, another uid is not, and release makes room") {
  RequestBytesBudget budget(100, 1000);
  CHECK(budget.try_reserve(1000, 60) == Refusal::none);
  CHECK(budget.try_reserve(1000, 41) == Refusal::per_uid);
  CHECK(budget.reserved(1000) == 60);  // a refusal takes nothing
  CHECK(budget.try_reserve(1000, 40) == Refusal::none);
  CHECK(budget.try_reserve(2000, 100) == Refusal::none);
  CHECK(budget.reserved_total() == 200);
  budget.release(1000, 60);
  CHECK(budget.try_reserve(1000, 60) == Refusal::none);
  budget.release(1000, 1000);  // more than it holds: down to nothing, not below
  CHECK(budget.reserved(1000) == 0);
  CHECK(budget.reserved_total() == 100);
}

TEST_CASE("request bytes budget: the total holds across uids, and 0 means no limit") {
  RequestBytesBudget budget(100, 250);
  CHECK(budget.try_reserve(1, 100) == Refusal::none);
  CHECK(budget.try_reserve(2, 100) == Refusal::none);
  CHECK(budget.try_reserve(3, 51) == Refusal::total);
  CHECK(budget.try_reserve(3, 50) == Refusal::none);

  RequestBytesBudget unlimited(0, 0);
  for (int i = 0; i < 1000; ++i) REQUIRE(unlimited.try_reserve(1, std::uint64_t{1} << 40) == Refusal::none);
  RequestBytesBudget huge(100, 1000);
  CHECK(huge.try_reserve(1, std::numeric_limits<std::uint64_t>::max()) == Refusal::per_uid);  // no overflow
}

TEST_CASE("request bytes budget: a hold gives its bytes back when reset, moved or destroyed") {
  RequestBytesBudget budget(100, 0);
  {
    REQUIRE(budget.try_reserve(7, 80) == Refusal::none);
    RequestBytesBudget::Hold hold(budget, 7, 80);
    RequestBytesBudget::Hold moved = std::move(hold);
    CHECK(budget.reserved(7) == 80);
    hold.reset();  // moved from: holds nothing
    CHECK(budget.reserved(7) == 80);
  }
  CHECK(budget.reserved(7) == 0);
  REQUIRE(budget.try_reserve(7, 30) == Refusal::none);
  RequestBytesBudget::Hold hold(budget, 7, 30);
  hold.reset();
  CHECK(budget.reserved(7) == 0);
}
