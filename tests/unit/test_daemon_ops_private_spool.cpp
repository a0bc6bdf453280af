// The private spool of a bundle operation (daemon/ops/private_spool.hpp): records read back in
// order, nothing visible in its directory, and no write past what it was granted.
#include <catch2/catch.hpp>

#include <cstdint>
#include <filesystem>
#include <vector>

#include <daemon/ops/private_spool.hpp>
#include <tests/support/temp_dir.hpp>

using namespace jitcache;
using jitcache::daemon::ops::PrivateSpool;

TEST_CASE("private spool: records read back in order, unnamed, and never past the grant") {
  testing::TempDir dir{"jitcache-spool"};
  auto spool = PrivateSpool::create(dir.path(), 100);
  REQUIRE(spool);
  const std::vector<std::uint8_t> a{1, 2, 3};
  const std::vector<std::uint8_t> b(40, 7);
  REQUIRE(spool->append_record(proto::Bytes(a)));
  REQUIRE(spool->append_record(proto::Bytes(b)));
  CHECK(spool->size() == 8 + 3 + 8 + 40);
  CHECK(std::filesystem::is_empty(dir.path()));
  auto over = spool->append_record(proto::Bytes(b));  // 59 + 48 > 100
  REQUIRE_FALSE(over);
  CHECK(over.error().code == common::ErrorCode::too_large);
  auto first = spool->next_record();
  REQUIRE(first);
  REQUIRE(first->has_value());
  CHECK(**first == a);
  auto second = spool->next_record();
  REQUIRE(second);
  REQUIRE(second->has_value());
  CHECK(**second == b);
  auto end = spool->next_record();
  REQUIRE(end);
  CHECK_FALSE(end->has_value());
}
