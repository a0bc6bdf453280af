// Failed loads reported by clients (REPORT_FAILURE), counted by the CUresult they carry, for the
// metrics endpoint (jitcache_load_failures_total{cu_result,name}).
// Rationale: a fixed set of the codes a load can plausibly return (proto::k_cu_result_names, the
// rows marked load_failure), each with a counter of its own, and one "other" counter for any number
// outside it. The cu_result is the client's word, so an unbounded label would let any client grow
// the exposition (and Prometheus's series) without limit.
// Thread safety: count() from any thread (relaxed atomics); snapshot() reads each independently.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include <proto/cu_result_names.hpp>

namespace jitcache::daemon::stats {

// The codes counted one by one: the rows of proto's CUresult table a load can return, in its order.
inline constexpr std::size_t k_counted_cu_result_count = [] {
  std::size_t count = 0;
  for (const proto::CuResultName& row : proto::k_cu_result_names) count += row.load_failure ? 1 : 0;
  return count;
}();

class LoadFailures {
 public:
  struct Row {
    std::optional<std::uint32_t> cu_result;  // nullopt: the "other" row
    std::string_view name;                   // "other" for the other row
    std::uint64_t count = 0;
  };

  void count(std::uint32_t cu_result);
  // Every counted code, then "other": a fixed set of rows, zeros included.
  std::vector<Row> snapshot() const;

 private:
  std::array<std::atomic<std::uint64_t>, k_counted_cu_result_count + 1> m_counts{};  // last: other
};

}  // namespace jitcache::daemon::stats
