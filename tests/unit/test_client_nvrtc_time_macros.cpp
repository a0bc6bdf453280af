// A compile that expands __DATE__, __TIME__ or __TIMESTAMP__ gives another output every second, so
// a stored answer would serve the first compile's date forever: such a compile is NVRTC's own
// (client/src/nvrtc/include_scan.hpp; docs/cache-key.md "What makes an NVRTC compile NVRTC's own"),
// wherever the macro is written: the source, a header passed at create, a header on disk.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <string>

#include <client/src/nvrtc/include_scan.hpp>
#include <tests/support/temp_dir.hpp>

using jitcache::client::nvrtc::IncludeScanInput;
using jitcache::client::nvrtc::scan_includes;
using jitcache::common::ErrorCode;
using jitcache::testing::TempDir;

TEST_CASE("nvrtc time macros: __DATE__, __TIME__ or __TIMESTAMP__ anywhere the compile reads makes it NVRTC's own") {
  TempDir dir;
  std::filesystem::create_directories(dir.file("inc"));
  std::ofstream(dir.file("inc/stamp.cuh")) << "#pragma once\nconstexpr char built[] = __DA\\\nTE__;\n";
  std::ofstream(dir.file("inc/plain.cuh")) << "#pragma once\nint __TIME__X = 1; // __TIME__X, MY__DATE__\n";
  const std::vector<std::string> include_paths{dir.file("inc")};
  for (const auto& [source, headers, macro] :
       std::vector<std::tuple<std::string, std::vector<std::pair<std::string, std::string>>, std::string>>{
           {"const char* t = __TIME__;\n", {}, "__TIME__"},
           {"#include \"made.h\"\n", {{"made.h", "auto s = __TIMESTAMP__;\n"}}, "__TIMESTAMP__"},
           {"#include <stamp.cuh>\n", {}, "__DATE__"}}) {
    INFO(source);
    auto record = scan_includes(IncludeScanInput{"kernel.cu", source, headers, include_paths, {}});
    REQUIRE_FALSE(record);
    CHECK(record.error().code == ErrorCode::unsupported);
    CHECK_THAT(record.error().message, Catch::Contains(macro));
  }
  // Other identifiers that contain the names are not the macros.
  auto plain = scan_includes(IncludeScanInput{"kernel.cu", "#include <plain.cuh>\n", {}, include_paths, {}});
  REQUIRE(plain);
  CHECK(plain->files == 1);
}
