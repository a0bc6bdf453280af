// The bounds a bundle operation is granted before it spends (docs/security.md "Bundles" "Who pays
// for what"): the spool's share of the disk (spool_budget.hpp) and an untrusted uid's hour of
// decoding (decode_budget.hpp).
#include <catch2/catch.hpp>

#include <chrono>
#include <cstdint>
#include <string>

#include <daemon/ops/decode_budget.hpp>
#include <daemon/ops/spool_budget.hpp>

using namespace jitcache;
using namespace jitcache::daemon::ops;

namespace {

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("bundle budgets: spools are granted what the disk has above the reserve, less what others hold") {
  std::uint64_t free = 1000;
  SpoolBudget budget("/nowhere", 200, [&]() -> common::Result<std::uint64_t> { return free; });
  auto first = budget.reserve(500, "this bundle");
  REQUIRE(first);
  CHECK(budget.granted() == 500);
  // 1000 free, 500 granted, 200 kept: 300 left, whatever the disk says of the ungranted bytes.
  auto second = budget.reserve(301, "this bundle");
  REQUIRE_FALSE(second);
  CHECK(second.error().code == common::ErrorCode::no_space);
  CHECK(contains(second.error().message, "bundle_spool_reserve"));
  REQUIRE(budget.reserve(300, "this bundle"));  // granted and given back at once
  CHECK(budget.granted() == 500);
  auto growing = budget.reserve(100, "this export");
  REQUIRE(growing);
  REQUIRE(growing->grow(200, "this export"));
  CHECK(growing->bytes() == 300);
  CHECK_FALSE(growing->grow(1, "this export"));
  CHECK(growing->bytes() == 300);
  first = SpoolBudget::Grant{};
  growing = SpoolBudget::Grant{};
  CHECK(budget.granted() == 0);
  free = 100;  // below the reserve: nothing at all
  CHECK_FALSE(budget.reserve(1, "this bundle"));
}

TEST_CASE("bundle budgets: an untrusted uid's decoding is bounded per hour, each uid on its own") {
  DecodeBudget budget(100);
  const auto start = DecodeBudget::Clock::now();
  REQUIRE(budget.charge(1000, 60, start));
  REQUIRE(budget.charge(1000, 40, start));
  auto over = budget.charge(1000, 1, start + std::chrono::minutes(10));
  REQUIRE_FALSE(over);
  CHECK(over.error().code == common::ErrorCode::too_large);
  CHECK(contains(over.error().message, "bundle_decoded_per_uid"));
  CHECK(contains(over.error().message, "try again in 51 minutes"));
  CHECK(budget.charge(1001, 100, start));                           // another uid
  CHECK(budget.charge(1000, 100, start + DecodeBudget::k_window));  // the next hour
  DecodeBudget unlimited(0);
  CHECK(unlimited.charge(1000, ~std::uint64_t{0}, start));
}
