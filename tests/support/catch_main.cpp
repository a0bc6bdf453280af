// main() of the unit, integration and fault tests: Catch's, plus the exit status of a skipped
// test case (tests/support/test_skip.hpp).
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <tests/support/skip_status.hpp>

int main(int argc, char** argv) { return jitcache::testing::skip_status(Catch::Session().run(argc, argv)); }
