// The tests' exit status with skips (tests/support/test_skip.hpp): a listener counts the test cases
// run and those marked skipped, and skip_status turns Catch's result into the status CTest reads.
// Included by the one file of a test program that defines CATCH_CONFIG_RUNNER (Catch's listener
// base class is compiled there only). Thread safety: Catch runs test cases on one thread.
#pragma once

#include <catch2/catch.hpp>

#include <tests/support/test_skip.hpp>

namespace jitcache::testing {

// What CTest's SKIP_RETURN_CODE is set to (tests/CMakeLists.txt, tests/gpu/CMakeLists.txt); 77 as
// the GNU build tools use it.
constexpr int k_skip_status = 77;

struct SkipCount {
  int ran = 0;
  int skipped = 0;
};

inline SkipCount& skip_count() {
  static SkipCount count;
  return count;
}

class SkipListener : public Catch::TestEventListenerBase {
 public:
  using Catch::TestEventListenerBase::TestEventListenerBase;

  void testCaseStarting(const Catch::TestCaseInfo& info) override {
    Catch::TestEventListenerBase::testCaseStarting(info);
    clear_test_case_skipped();
  }
  void testCaseEnded(const Catch::TestCaseStats& stats) override {
    ++skip_count().ran;
    if (test_case_skipped()) ++skip_count().skipped;
    Catch::TestEventListenerBase::testCaseEnded(stats);
  }
};

// Catch's result (the number of failed test cases, or its own error status) when not 0; else 77
// when every test case run was skipped, so that a run of one skipped case reads as skipped.
inline int skip_status(int catch_result) {
  if (catch_result != 0) return catch_result;
  const SkipCount& count = skip_count();
  return count.ran > 0 && count.skipped == count.ran ? k_skip_status : 0;
}

}  // namespace jitcache::testing

// (Catch pastes the name into an identifier, so it must be unqualified.)
using jitcache::testing::SkipListener;
CATCH_REGISTER_LISTENER(SkipListener)
