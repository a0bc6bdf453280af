// RejitBudget (daemon/rejit/rejit_budget.hpp): a re-JIT compile starts only while what the batch
// spent, what its running compiles are expected to cost and its own estimate fit in the budget.
#include <catch2/catch.hpp>

#include <daemon/rejit/rejit_budget.hpp>

using jitcache::daemon::rejit::RejitBudget;

TEST_CASE(
    "rejit budget: compiles start while spent, reserved and their estimate fit, and actual times replace estimates") {
  RejitBudget budget(10'000);
  CHECK(budget.reserve(4'000));
  CHECK(budget.reserve(4'000));
  // 8 000 reserved: 3 000 more would go over.
  CHECK_FALSE(budget.reserve(3'000));
  CHECK(budget.reserve(2'000));
  CHECK(budget.reserved_us() == 10'000);

  // The first took less than expected: the room it leaves is usable again.
  budget.settle(4'000, 1'000);
  CHECK(budget.spent_us() == 1'000);
  CHECK(budget.reserved_us() == 6'000);
  CHECK(budget.reserve(3'000));
  CHECK_FALSE(budget.reserve(1));

  // One that ran longer than expected can take the batch past its budget; nothing more starts.
  budget.settle(4'000, 9'000);
  budget.settle(2'000, 0);
  budget.settle(3'000, 0);
  CHECK(budget.spent_us() == 10'000);
  CHECK(budget.reserved_us() == 0);
  CHECK_FALSE(budget.reserve(1));
}

TEST_CASE(
    "rejit budget: an entry with no recorded compile time still costs something, and a zero budget starts nothing") {
  RejitBudget tiny(1);
  CHECK(tiny.reserve(0));
  CHECK_FALSE(tiny.reserve(0));
  RejitBudget none(0);
  CHECK_FALSE(none.reserve(0));
}
