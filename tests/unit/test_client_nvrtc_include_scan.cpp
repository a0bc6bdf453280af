// The include record of an NVRTC compile (client/src/nvrtc/include_scan.hpp): every place a header
// may come from is recorded with what it holds, so that a key names one state of the disk.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <string>

#include <client/src/nvrtc/include_scan.hpp>
#include <tests/support/temp_dir.hpp>

using jitcache::client::nvrtc::included_names;
using jitcache::client::nvrtc::IncludeScanInput;
using jitcache::client::nvrtc::scan_includes;
using jitcache::common::ErrorCode;
using jitcache::testing::TempDir;

namespace {

void write(const std::string& path, const std::string& text) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
}

}  // namespace

TEST_CASE("include scan: names in #include, #include_next and __has_include, whatever #if surrounds them") {
  auto names = included_names(
      "#include \"a.h\"\n  #  include <b/c.h>\n#if 0\n#include_next <d.h>\n#endif\n"
      "#if __has_include(<e.h>) && defined(__has_include)\n#endif\n#inc\\\nlude \"f.h\"\nint include;\n");
  REQUIRE(names);
  CHECK(*names == std::vector<std::string>{"a.h", "b/c.h", "d.h", "f.h", "e.h"});
}

TEST_CASE("include scan: a file named through a macro cannot be followed") {
  for (const char* text : {"#include HEADER\n", "#include_next MACRO(x)\n", "#if __has_include(HEADER)\n#endif\n"}) {
    INFO(text);
    auto names = included_names(text);
    REQUIRE_FALSE(names);
    CHECK(names.error().code == ErrorCode::unsupported);
  }
}

TEST_CASE(
    "include scan: a header's content, a header appearing earlier in the search, and a nested one change the record") {
  TempDir dir;
  const std::string early = dir.file("early");
  const std::string late = dir.file("late");
  std::filesystem::create_directories(early);
  write(late + "/v.cuh", "#include \"nested/w.cuh\"\n");
  write(late + "/nested/w.cuh", "#define W 1\n");
  IncludeScanInput input{"kernel.cu", "#include <v.cuh>\n", {{"mem.cuh", "#include <m.cuh>\n"}}, {early, late}, {}};
  auto first = scan_includes(input);
  REQUIRE(first);
  CHECK(first->files == 2);
  CHECK_THAT(first->text, Catch::Contains(early + "/v.cuh"));
  CHECK_THAT(first->text, Catch::Contains(late + "/nested/w.cuh"));
  CHECK_THAT(first->text, Catch::Contains(early + "/m.cuh"));  // from the in-memory header's include
  CHECK(scan_includes(input)->text == first->text);

  write(late + "/nested/w.cuh", "#define W 2\n");
  auto nested = scan_includes(input);
  REQUIRE(nested);
  CHECK(nested->text != first->text);

  write(early + "/v.cuh", "#define V 1\n");
  auto shadowed = scan_includes(input);
  REQUIRE(shadowed);
  CHECK(shadowed->text != nested->text);
}

TEST_CASE("include scan: a macro-named include in a file found on disk makes the compile NVRTC's own") {
  TempDir dir;
  write(dir.file("inc/v.cuh"), "#include CONFIG_HEADER\n");
  auto record = scan_includes({"kernel.cu", "#include <v.cuh>\n", {}, {dir.file("inc")}, {}});
  REQUIRE_FALSE(record);
  CHECK(record.error().code == ErrorCode::unsupported);
}

TEST_CASE("include scan: a device or FIFO where a header may be found makes the compile NVRTC's own") {
  auto record = scan_includes({"kernel.cu", "#include \"/dev/null\"\n", {}, {}, {}});
  REQUIRE_FALSE(record);
  CHECK(record.error().code == ErrorCode::unsupported);
  CHECK_THAT(record.error().message, Catch::Contains("/dev/null"));
}
