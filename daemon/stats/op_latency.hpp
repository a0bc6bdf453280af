// How long requests take, per op: one fixed-bucket histogram per op code, measured by the
// connection from a request's frame read to its reply written (a COMPILE's includes the compile).
// Exposed as jitcache_request_duration_seconds{op} (daemon/metrics/).
// Rationale: fixed buckets and one relaxed atomic add per bucket, sum and request: recording costs
// a few nanoseconds on the worker thread that served the request, and never a lock. Each request
// lands in exactly one bucket; the exposition makes them cumulative and takes the count from their
// total, so _count always equals the +Inf bucket however a scrape interleaves with recording.
// Thread safety: record() from any thread; snapshot() reads each atomic independently.
#pragma once

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <string_view>

#include <proto/wire.hpp>

namespace jitcache::daemon::stats {

struct LatencyBucket {
  std::uint64_t upper_us;  // inclusive upper bound
  std::string_view le;     // the same bound in seconds, as the exposition's `le` label writes it
};

// From 50 us (a hot LOOKUP) to 2 minutes (a long COMPILE, compile_wall_time's default).
inline constexpr std::array<LatencyBucket, 20> k_latency_buckets{{
    {50, "5e-05"},     {100, "0.0001"},    {250, "0.00025"},   {500, "0.0005"},    {1'000, "0.001"},
    {2'500, "0.0025"}, {5'000, "0.005"},   {10'000, "0.01"},   {25'000, "0.025"},  {50'000, "0.05"},
    {100'000, "0.1"},  {250'000, "0.25"},  {500'000, "0.5"},   {1'000'000, "1"},   {2'500'000, "2.5"},
    {5'000'000, "5"},  {10'000'000, "10"}, {30'000'000, "30"}, {60'000'000, "60"}, {120'000'000, "120"},
}};

// Slot 0 holds any op number outside the table ("unknown"); slot n the op numbered n (proto::k_ops),
// up to the highest. A number the table skips (ops are numbered as they are assigned, not always in
// order) has a slot that stays empty and is not shown (is_latency_slot_shown).
inline constexpr std::size_t k_latency_op_slots = [] {
  std::size_t highest = 0;
  for (const auto& row : proto::k_ops) highest = std::max(highest, static_cast<std::size_t>(row.value));
  return highest + 1;
}();
// Slot 0 and the slots of the table's ops: the ones the metrics endpoint shows.
bool is_latency_slot_shown(std::size_t slot);

struct LatencySnapshot {
  std::array<std::uint64_t, k_latency_buckets.size() + 1> buckets{};  // not cumulative; last: over
  std::uint64_t sum_us = 0;
};

class OpLatency {
 public:
  void record(proto::Op op, std::chrono::microseconds elapsed);
  LatencySnapshot snapshot(std::size_t slot) const;

 private:
  struct Histogram {
    std::array<std::atomic<std::uint64_t>, k_latency_buckets.size() + 1> buckets{};
    std::atomic<std::uint64_t> sum_us{0};
  };
  std::array<Histogram, k_latency_op_slots> m_ops{};
};

// The slot's op label: "LOOKUP", ...; "unknown" for slot 0.
std::string_view latency_slot_name(std::size_t slot);

}  // namespace jitcache::daemon::stats
