// How an include path option names its directory (proto/nvrtc_options.hpp): NVRTC 13.0 takes
// `-I=DIR` as DIR and trims the blanks around a path, so the directory the cache probes is DIR, or,
// for a value with a blank, the compile is NVRTC's own (unknown). Seen with the real NVRTC in
// tests/integration/test_transparent_nvrtc_directive_forms.cpp.
#include <catch2/catch.hpp>

#include <proto/nvrtc_options.hpp>

using jitcache::proto::classify_nvrtc_option;
using Class = jitcache::proto::NvrtcOptionClass;

TEST_CASE("nvrtc include path spelling: -IDIR and -I=DIR name DIR, and a blank anywhere is not understood") {
  for (const char* option : {"-Iinc", "-I=inc", "--include-path=inc"}) {
    INFO(option);
    const auto info = classify_nvrtc_option(option);
    CHECK(info.kind == Class::include_path);
    CHECK(info.value == "inc");
  }
  for (const char* option : {"-I inc", "-I  inc", "-Iinc ", "-I=inc ", "-I= inc", "-I\tinc", "--include-path=inc ",
                             "--include-path= inc", "--pre-include=inc/pre.h ", "-include= inc/pre.h", "-I="}) {
    INFO(option);
    CHECK(classify_nvrtc_option(option).kind == Class::unknown);
  }
  CHECK(classify_nvrtc_option("-include=inc/pre.h").kind == Class::pre_include);
}
