// JITCACHE_DISABLE as libjitcache-preload.so's shim reads it (client/src/preload_shim/shim_disable.h):
// the client's rule, in C without libstdc++.
#include <catch2/catch.hpp>

extern "C" {
#include <client/src/preload_shim/shim_disable.h>
}

TEST_CASE("preload shim: 1, true, yes, on in any case, and any other non-empty value disable") {
  for (const char* value : {"1", "true", "TRUE", "Yes", "on", "On", "2", "disable", " "}) {
    INFO(value);
    CHECK(jitcache_shim_disable_value(value) == 1);
  }
}

TEST_CASE("preload shim: 0, false, no, off in any case, the empty string and no variable do not disable") {
  for (const char* value : {"0", "false", "False", "NO", "off", "OFF", ""}) {
    INFO(value);
    CHECK(jitcache_shim_disable_value(value) == 0);
  }
  CHECK(jitcache_shim_disable_value(nullptr) == 0);
}
