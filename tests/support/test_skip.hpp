// A test case that cannot run here (not root, no nvcc when the tests were built, no IPv6
// loopback...) says why and is counted as skipped, not passed:
//
//   if (!users.available()) JITCACHE_SKIP(users.why());
//
// prints "SKIPPED: <reason>" as a Catch2 warning and returns from the test case; the tests' main
// (tests/support/catch_main.cpp, tests/gpu/gpu_main.cpp) then exits 77 when every test case it ran
// skipped and none failed, which CTest's SKIP_RETURN_CODE (tests/CMakeLists.txt) reports as
// "Skipped". A case that checked something and then skips the rest (JITCACHE_MARK_SKIPPED, which
// does not return) is skipped too: its name promises what did not run. A failed check still fails it.
//
// Rationale: Catch2 2.13 (Debian 12's) has no SKIP(); CTest registers each test case as a run of
// its own (catch_discover_tests), so the exit status of that run is what CTest counts.
// Thread safety: call from the test case's thread.
#pragma once

#include <catch2/catch.hpp>

namespace jitcache::testing {

// Marks the running test case skipped (read by the mains' listener).
void mark_test_case_skipped();
// Whether the running test case was marked; the listener clears it when a test case starts.
bool test_case_skipped();
void clear_test_case_skipped();

}  // namespace jitcache::testing

// Says why the rest of the test case cannot run here and counts it as skipped; does not return.
#define JITCACHE_MARK_SKIPPED(reason)              \
  do {                                             \
    WARN("SKIPPED: " << reason);                   \
    ::jitcache::testing::mark_test_case_skipped(); \
  } while (false)

// Says why the test case cannot run here, counts it as skipped and returns from it.
#define JITCACHE_SKIP(reason)      \
  do {                             \
    JITCACHE_MARK_SKIPPED(reason); \
    return;                        \
  } while (false)
