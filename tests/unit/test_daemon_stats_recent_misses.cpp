// daemon/stats/recent_misses.hpp: the miss ring holds at most 1024 records, whatever the traffic,
// one uid keeps at most a quarter of it once full, and each uid sees only its own.
#include <catch2/catch.hpp>

#include <cstdint>

#include <daemon/stats/recent_misses.hpp>

using namespace jitcache;
using daemon::stats::k_recent_misses;
using daemon::stats::k_recent_misses_per_uid;
using daemon::stats::RecentMisses;

namespace {

proto::MissRecord miss(std::uint32_t uid, std::int64_t at_ms) {
  proto::MissRecord record;
  record.uid = uid;
  record.at_ms = at_ms;
  record.key.arch = "sm_90";
  record.key_id.bytes[0] = static_cast<std::uint8_t>(uid);
  return record;
}

}  // namespace

TEST_CASE("recent misses: bounded in total, and a uid flooding it cannot push the others' records out") {
  RecentMisses misses;
  for (std::int64_t i = 0; i < 600; ++i) misses.record(miss(1000, i));
  for (std::int64_t i = 0; i < 424; ++i) misses.record(miss(1001, 10'000 + i));  // full now
  for (std::int64_t i = 0; i < 100'000; ++i) misses.record(miss(666, 20'000 + i));
  const auto all = misses.newest(k_recent_misses + 10, true, 0);
  CHECK(all.size() == k_recent_misses);
  CHECK(all.front().at_ms == 20'000 + 99'999);
  CHECK(misses.newest(k_recent_misses, false, 666).size() == k_recent_misses_per_uid);
  CHECK(misses.newest(k_recent_misses, false, 1001).size() == 424);  // untouched
  CHECK(misses.newest(k_recent_misses, false, 1000).size() == k_recent_misses - 424 - k_recent_misses_per_uid);
}

TEST_CASE("recent misses: a uid sees only its own, newest first, and of_key finds a key's records") {
  RecentMisses misses;
  misses.record(miss(1000, 1));
  misses.record(miss(1001, 2));
  misses.record(miss(1000, 3));
  const auto own = misses.newest(10, false, 1000);
  REQUIRE(own.size() == 2);
  CHECK(own[0].at_ms == 3);
  CHECK(own[1].at_ms == 1);
  CHECK(misses.newest(1, true, 0).at(0).at_ms == 3);
  proto::Digest256 id;
  id.bytes[0] = static_cast<std::uint8_t>(1001);
  CHECK(misses.of_key(id).size() == 1);
}
