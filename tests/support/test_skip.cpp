#include <tests/support/test_skip.hpp>

namespace jitcache::testing {
namespace {

bool g_skipped = false;

}  // namespace

void mark_test_case_skipped() { g_skipped = true; }
bool test_case_skipped() { return g_skipped; }
void clear_test_case_skipped() { g_skipped = false; }

}  // namespace jitcache::testing
