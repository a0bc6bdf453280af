// Failed loads reported by clients (REPORT_FAILURE), counted by the CUresult they carry, for the
// metrics endpoint (jitcache_load_failures_total{cu_result,name}).
// Rationale: a fixed table of the codes a load can plausibly return, each with a counter of its
// own, and one "other" counter for any number outside it. The cu_result is the client's word, so an
// unbounded label would let any client grow the exposition (and Prometheus's series) without limit.
// Thread safety: count() from any thread (relaxed atomics); snapshot() reads each independently.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace jitcache::daemon::stats {

struct CuResultName {
  std::uint32_t code;
  std::string_view name;
};

// The codes counted one by one (cuda.h numbers; a CUresult number never changes meaning).
inline constexpr std::array<CuResultName, 27> k_counted_cu_results{{
    {1, "CUDA_ERROR_INVALID_VALUE"},
    {2, "CUDA_ERROR_OUT_OF_MEMORY"},
    {3, "CUDA_ERROR_NOT_INITIALIZED"},
    {4, "CUDA_ERROR_DEINITIALIZED"},
    {34, "CUDA_ERROR_STUB_LIBRARY"},
    {100, "CUDA_ERROR_NO_DEVICE"},
    {101, "CUDA_ERROR_INVALID_DEVICE"},
    {200, "CUDA_ERROR_INVALID_IMAGE"},
    {201, "CUDA_ERROR_INVALID_CONTEXT"},
    {209, "CUDA_ERROR_NO_BINARY_FOR_GPU"},
    {218, "CUDA_ERROR_INVALID_PTX"},
    {221, "CUDA_ERROR_JIT_COMPILER_NOT_FOUND"},
    {222, "CUDA_ERROR_UNSUPPORTED_PTX_VERSION"},
    {223, "CUDA_ERROR_JIT_COMPILATION_DISABLED"},
    {224, "CUDA_ERROR_UNSUPPORTED_EXEC_AFFINITY"},
    {225, "CUDA_ERROR_UNSUPPORTED_DEVSIDE_SYNC"},
    {300, "CUDA_ERROR_INVALID_SOURCE"},
    {301, "CUDA_ERROR_FILE_NOT_FOUND"},
    {302, "CUDA_ERROR_SHARED_OBJECT_SYMBOL_NOT_FOUND"},
    {303, "CUDA_ERROR_SHARED_OBJECT_INIT_FAILED"},
    {304, "CUDA_ERROR_OPERATING_SYSTEM"},
    {400, "CUDA_ERROR_INVALID_HANDLE"},
    {500, "CUDA_ERROR_NOT_FOUND"},
    {801, "CUDA_ERROR_NOT_SUPPORTED"},
    {803, "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH"},
    {804, "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE"},
    {999, "CUDA_ERROR_UNKNOWN"},
}};

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
  std::array<std::atomic<std::uint64_t>, k_counted_cu_results.size() + 1> m_counts{};  // last: other
};

}  // namespace jitcache::daemon::stats
