// Request latency per op (daemon/stats/op_latency.hpp): each request lands in the first bucket whose
// bound it does not exceed, per op, with its time summed; ops outside the table share "unknown".
#include <catch2/catch.hpp>

#include <chrono>
#include <cstdint>
#include <numeric>
#include <set>
#include <string_view>

#include <daemon/stats/op_latency.hpp>

using namespace jitcache;
using namespace jitcache::daemon::stats;
using std::chrono::microseconds;

namespace {

std::uint64_t total(const LatencySnapshot& s) {
  return std::accumulate(s.buckets.begin(), s.buckets.end(), std::uint64_t{0});
}

}  // namespace

TEST_CASE("op latency: a request lands in the first bucket whose bound it does not exceed") {
  OpLatency latency;
  latency.record(proto::Op::lookup, microseconds(50));           // on the first bound: first bucket
  latency.record(proto::Op::lookup, microseconds(51));           // just above: second
  latency.record(proto::Op::lookup, microseconds(0));            // first
  latency.record(proto::Op::lookup, microseconds(-5));           // a clock step back counts as 0
  latency.record(proto::Op::lookup, microseconds(500'000'000));  // above the last bound
  const auto s = latency.snapshot(static_cast<std::size_t>(proto::Op::lookup));
  CHECK(s.buckets[0] == 3);
  CHECK(s.buckets[1] == 1);
  CHECK(s.buckets.back() == 1);
  CHECK(total(s) == 5);
  CHECK(s.sum_us == 50 + 51 + 500'000'000);
}

TEST_CASE("op latency: ops are kept apart, and an op outside the table counts as unknown") {
  OpLatency latency;
  latency.record(proto::Op::put, microseconds(2'000));
  latency.record(static_cast<proto::Op>(4000), microseconds(10));
  CHECK(total(latency.snapshot(static_cast<std::size_t>(proto::Op::put))) == 1);
  CHECK(total(latency.snapshot(static_cast<std::size_t>(proto::Op::lookup))) == 0);
  CHECK(total(latency.snapshot(0)) == 1);
  CHECK(latency_slot_name(0) == "unknown");
  CHECK(latency_slot_name(static_cast<std::size_t>(proto::Op::report_failure)) == "REPORT_FAILURE");
}

TEST_CASE("op latency: the bucket bounds rise, and each label spells its bound in seconds") {
  for (std::size_t i = 0; i < k_latency_buckets.size(); ++i) {
    if (i > 0) CHECK(k_latency_buckets[i].upper_us > k_latency_buckets[i - 1].upper_us);
    CHECK(std::stod(std::string(k_latency_buckets[i].le)) * 1e6 ==
          Approx(static_cast<double>(k_latency_buckets[i].upper_us)));
  }
}

TEST_CASE("op latency: every op of the table has a slot of its own, past gaps in the numbers too, each shown once") {
  OpLatency latency;
  latency.record(proto::Op::import_bundle, microseconds(10));
  CHECK(total(latency.snapshot(static_cast<std::size_t>(proto::Op::import_bundle))) == 1);
  CHECK(total(latency.snapshot(0)) == 0);
  CHECK(latency_slot_name(static_cast<std::size_t>(proto::Op::export_bundle)) == "EXPORT_BUNDLE");
  std::set<std::string_view> names;
  for (std::size_t slot = 0; slot < k_latency_op_slots; ++slot) {
    if (is_latency_slot_shown(slot)) CHECK(names.insert(latency_slot_name(slot)).second);
  }
  CHECK(names.size() == proto::k_ops.size());
}
