// proto's CUresult table (proto/cu_result_names.hpp), which the client, the daemon and the fake driver
// share: its numbers are cuda.h's, it is sorted and unique, and the codes the daemon counts on their
// own (metric labels users alert on) are still the ones they were.
#include <catch2/catch.hpp>

#include <tests/support/test_skip.hpp>

#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <proto/cu_result_names.hpp>

using namespace jitcache::proto;

TEST_CASE("cu result names: the table is sorted by code, and codes and names are unique") {
  std::set<std::string_view> names;
  for (std::size_t i = 0; i < k_cu_result_names.size(); ++i) {
    const CuResultName& row = k_cu_result_names[i];
    INFO(row.name);
    if (i > 0) CHECK(k_cu_result_names[i - 1].code < row.code);
    CHECK(names.insert(row.name).second);
    CHECK(row.name.starts_with("CUDA_"));
    CHECK_FALSE(row.description.empty());
  }
}

TEST_CASE("cu result names: find_cu_result finds every row and nothing else") {
  for (const CuResultName& row : k_cu_result_names) {
    const CuResultName* found = find_cu_result(row.code);
    REQUIRE(found != nullptr);
    CHECK(found->name == row.name);
  }
  CHECK(find_cu_result(218)->name == "CUDA_ERROR_INVALID_PTX");
  CHECK(find_cu_result(5) == nullptr);
  CHECK(find_cu_result(12345) == nullptr);
  CHECK(find_cu_result(0xFFFFFFFFu) == nullptr);
}

TEST_CASE("cu result names: the codes counted one by one are the 27 load errors they always were") {
  // jitcache_load_failures_total{cu_result,name}: a code dropped from this set would take away a
  // series that dashboards select by (docs/operations.md "Metrics").
  const std::vector<std::uint32_t> counted_before{1,   2,   3,   4,   34,  100, 101, 200, 201, 209, 218, 221, 222, 223,
                                                  224, 225, 300, 301, 302, 303, 304, 400, 500, 801, 803, 804, 999};
  std::vector<std::uint32_t> counted;
  for (const CuResultName& row : k_cu_result_names) {
    if (row.load_failure) counted.push_back(row.code);
  }
  CHECK(counted == counted_before);
  CHECK_FALSE(find_cu_result(0)->load_failure);  // CUDA_SUCCESS is no failure
}

#if __has_include(<cuda.h>)
#include <cuda.h>

TEST_CASE("cu result names: every row has the number cuda.h gives its name") {
  struct Named {
    CUresult code;
    std::string_view name;
  };
#define JITCACHE_CUDA_NAMED(name) \
  Named { name, #name }
  const std::vector<Named> from_cuda_h{
      JITCACHE_CUDA_NAMED(CUDA_SUCCESS),
      JITCACHE_CUDA_NAMED(CUDA_ERROR_INVALID_VALUE),
      JITCACHE_CUDA_NAMED(CUDA_ERROR_OUT_OF_MEMORY),
      JITCACHE_CUDA_NAMED(CUDA_ERROR_NOT_INITIALIZED),
      JITCACHE_CUDA_NAMED(CUDA_ERROR_DEINITIALIZED),
      JITCACHE_CUDA_NAMED(CUDA_ERROR_STUB_LIBRARY),
      JITCACHE_CUDA_NAMED(CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER),
      JITCACHE_CUDA_NAMED(CUDA_ERROR_NO_DEVICE),
      JITCACHE_CUDA_NAMED(CUDA_ERROR_INVALID_DEVICE),
      JITCACHE_CUDA_NAMED(CUDA_ERROR_INVALID_IMAGE),
      JITCACHE_CUDA_NAMED(CUDA_ERROR_INVALID_CONTEXT),
      JITCACHE_CUDA_NAMED(CUDA_ERROR_NO_BINARY_FOR_GPU),
      JITCACHE_CUDA_NAMED(CUDA_ERROR_INVALID_PTX),
      JITCACHE_CUDA_NAMED(CUDA_ERROR_JIT_COMPILER_NOT_FOUND),
      JITCACHE_CUDA_NAMED(CUDA_ERROR_UNSUPPORTED_PTX_VERSION),
      JITCACHE_CUDA_NAMED(CUDA_ERROR_JIT_COMPILATION_DISABLED),
      JITCACHE_CUDA_NAMED(CUDA_ERROR_UNSUPPORTED_EXEC_AFFINITY),
      JITCACHE_CUDA_NAMED(CUDA_ERROR_UNSUPPORTED_DEVSIDE_SYNC),
      JITCACHE_CUDA_NAMED(CUDA_ERROR_INVALID_SOURCE),
      JITCACHE_CUDA_NAMED(CUDA_ERROR_FILE_NOT_FOUND),
      JITCACHE_CUDA_NAMED(CUDA_ERROR_SHARED_OBJECT_SYMBOL_NOT_FOUND),
      JITCACHE_CUDA_NAMED(CUDA_ERROR_SHARED_OBJECT_INIT_FAILED),
      JITCACHE_CUDA_NAMED(CUDA_ERROR_OPERATING_SYSTEM),
      JITCACHE_CUDA_NAMED(CUDA_ERROR_INVALID_HANDLE),
      JITCACHE_CUDA_NAMED(CUDA_ERROR_ILLEGAL_STATE),
      JITCACHE_CUDA_NAMED(CUDA_ERROR_NOT_FOUND),
      JITCACHE_CUDA_NAMED(CUDA_ERROR_NOT_READY),
      JITCACHE_CUDA_NAMED(CUDA_ERROR_ILLEGAL_ADDRESS),
      JITCACHE_CUDA_NAMED(CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES),
      JITCACHE_CUDA_NAMED(CUDA_ERROR_LAUNCH_FAILED),
      JITCACHE_CUDA_NAMED(CUDA_ERROR_NOT_PERMITTED),
      JITCACHE_CUDA_NAMED(CUDA_ERROR_NOT_SUPPORTED),
      JITCACHE_CUDA_NAMED(CUDA_ERROR_SYSTEM_NOT_READY),
      JITCACHE_CUDA_NAMED(CUDA_ERROR_SYSTEM_DRIVER_MISMATCH),
      JITCACHE_CUDA_NAMED(CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE),
      JITCACHE_CUDA_NAMED(CUDA_ERROR_TIMEOUT),
      JITCACHE_CUDA_NAMED(CUDA_ERROR_UNKNOWN),
  };
#undef JITCACHE_CUDA_NAMED
  REQUIRE(from_cuda_h.size() == k_cu_result_names.size());
  for (const Named& named : from_cuda_h) {
    INFO(named.name);
    const CuResultName* row = find_cu_result(static_cast<std::uint32_t>(named.code));
    REQUIRE(row != nullptr);
    CHECK(row->name == named.name);
  }
}
#else
TEST_CASE("cu result names: every row has the number cuda.h gives its name") {
  JITCACHE_MARK_SKIPPED("no cuda.h in this build (the CUDA toolkit was not found)");
}
#endif
