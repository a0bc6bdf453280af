// The include record of an NVRTC compile (client/src/nvrtc/include_scan.hpp): every place a header
// may come from is recorded with what it holds, so that a key names one state of the disk.
#include <catch2/catch.hpp>

#include <sys/resource.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <client/src/nvrtc/include_scan.hpp>
#include <tests/support/temp_dir.hpp>
#include <tests/support/test_skip.hpp>

using jitcache::client::nvrtc::included_names;
using jitcache::client::nvrtc::IncludeScanInput;
using jitcache::client::nvrtc::scan_includes;
using jitcache::common::ErrorCode;
using jitcache::testing::TempDir;
using jitcache::testing::write_file;

namespace {}  // namespace

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
  write_file(late + "/v.cuh", "#include \"nested/w.cuh\"\n");
  write_file(late + "/nested/w.cuh", "#define W 1\n");
  IncludeScanInput input{"kernel.cu", "#include <v.cuh>\n", {{"mem.cuh", "#include <m.cuh>\n"}}, {early, late}, {}};
  auto first = scan_includes(input);
  REQUIRE(first);
  CHECK(first->files == 2);
  CHECK_THAT(first->text, Catch::Contains(early + "/v.cuh"));
  CHECK_THAT(first->text, Catch::Contains(late + "/nested/w.cuh"));
  CHECK_THAT(first->text, Catch::Contains(early + "/m.cuh"));  // from the in-memory header's include
  CHECK(scan_includes(input)->text == first->text);

  write_file(late + "/nested/w.cuh", "#define W 2\n");
  auto nested = scan_includes(input);
  REQUIRE(nested);
  CHECK(nested->text != first->text);

  write_file(early + "/v.cuh", "#define V 1\n");
  auto shadowed = scan_includes(input);
  REQUIRE(shadowed);
  CHECK(shadowed->text != nested->text);
}

TEST_CASE("include scan: a macro-named include in a file found on disk makes the compile NVRTC's own") {
  TempDir dir;
  write_file(dir.file("inc/v.cuh"), "#include CONFIG_HEADER\n");
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

TEST_CASE("include scan: a huge file where a header may be found is refused unread") {
  TempDir dir;
  std::filesystem::create_directories(dir.file("inc"));
  // Sparse: 600 MiB on no disk, beyond what a compile may read. Reading it to refuse it afterwards
  // took its size in memory (a larger one got the program killed).
  std::ofstream(dir.file("inc/huge.h")).close();
  std::filesystem::resize_file(dir.file("inc/huge.h"), std::uintmax_t{600} << 20);
  rusage before{};
  ::getrusage(RUSAGE_SELF, &before);
  auto record = scan_includes({"kernel.cu", "#if 0\n#include <huge.h>\n#endif\n", {}, {dir.file("inc")}, {}});
  rusage after{};
  ::getrusage(RUSAGE_SELF, &after);
  REQUIRE_FALSE(record);
  CHECK(record.error().code == ErrorCode::unsupported);
  CHECK_THAT(record.error().message, Catch::Contains("huge.h") && Catch::Contains("larger than"));
  CHECK(after.ru_maxrss - before.ru_maxrss < 100 * 1024);  // KiB: never read into memory
}

// Probes through forwarding macros (client/src/nvrtc/has_include_forwarders.hpp): the CUDA C++
// standard library probes its optional headers through `#define _CCCL_HAS_INCLUDE(_X)
// __has_include(_X)`.
namespace {

// The record of a kernel whose source is `source`, with `inc` as its one -I directory.
jitcache::common::Result<jitcache::client::nvrtc::IncludeRecord> scan_with(const TempDir& dir,
                                                                           const std::string& source) {
  return scan_includes({"kernel.cu", source, {}, {dir.file("inc")}, {}});
}

}  // namespace

TEST_CASE(
    "include scan: a call of a macro that applies __has_include to its parameter is a probe of its literal file") {
  auto names = included_names("#define FWD(x) __has_include(x)\n#if FWD(<a.h>) || FWD( \"b.h\" )\n#endif\n");
  REQUIRE(names);
  CHECK(*names == std::vector<std::string>{"a.h", "b.h"});
}

TEST_CASE(
    "include scan: a forwarder defined in another header makes its calls probes, and the file appearing changes the record") {
  TempDir dir;
  write_file(dir.file("inc/fwd.cuh"), "#define FWD(_X) __has_include(_X)\n");
  const std::string source = "#include <fwd.cuh>\n#if FWD(<optional.cuh>)\n#include <optional.cuh>\n#endif\n";
  auto absent = scan_with(dir, source);
  REQUIRE(absent);
  CHECK_THAT(absent->text, Catch::Contains(dir.file("inc/optional.cuh") + std::string(1, '\0') + "absent"));

  write_file(dir.file("inc/optional.cuh"), "#define OPTIONAL 1\n");
  auto present = scan_with(dir, source);
  REQUIRE(present);
  CHECK_THAT(present->text, Catch::Contains(dir.file("inc/optional.cuh") + std::string(1, '\0') + "file "));
  CHECK(present->text != absent->text);
}

TEST_CASE(
    "include scan: a forwarder through two levels, an alias, a variadic one and one in a #define body probe their files") {
  TempDir dir;
  // Defined after the header that calls it is found, and in a header the source reaches last.
  write_file(
      dir.file("inc/uses.cuh"),
      "#if TWO(<two.cuh>) && ALIAS(<alias.cuh>) && VAR(\"var.cuh\")\n#endif\n#define HAS_BODY ONE(<body.cuh>)\n");
  write_file(dir.file("inc/defs.cuh"),
             "#define ONE(x) __has_include(x)\n#define TWO(y) ONE(y)\n#define ALIAS __has_include\n"
             "#define VAR(...) TWO(__VA_ARGS__)\n");
  auto record = scan_with(dir, "#include <uses.cuh>\n#include <defs.cuh>\n");
  REQUIRE(record);
  for (const char* file : {"two.cuh", "alias.cuh", "var.cuh", "body.cuh"}) {
    INFO(file);
    CHECK_THAT(record->text, Catch::Contains(dir.file("inc/") + file + std::string(1, '\0') + "absent"));
  }
}

TEST_CASE("include scan: a forwarder of __has_include_next probes its file like __has_include_next") {
  TempDir dir;
  write_file(dir.file("inc/defs.cuh"), "#define NEXT(x) __has_include_next(x)\n#if NEXT(<next.cuh>)\n#endif\n");
  auto record = scan_with(dir, "#include <defs.cuh>\n");
  REQUIRE(record);
  CHECK_THAT(record->text, Catch::Contains(dir.file("inc/next.cuh") + std::string(1, '\0') + "absent"));
}

TEST_CASE(
    "include scan: a forwarder called with a macro for its file, or passed on by name, makes the compile NVRTC's own, naming the call") {
  TempDir dir;
  write_file(dir.file("inc/defs.cuh"), "#define FWD(_X) __has_include(_X)\n#define TWO(y) FWD(y)\n");
  for (const char* use : {"#if FWD(CONFIG_HEADER)\n#endif\n", "#elif TWO(CONFIG_HEADER)\n",
                          "#define HAS_CONFIG FWD(CONFIG_HEADER)\n", "#if APPLY(FWD)(<config.h>)\n"}) {
    INFO(use);
    auto record = scan_with(dir, std::string("#include <defs.cuh>\n") + use);
    REQUIRE_FALSE(record);
    CHECK(record.error().code == ErrorCode::unsupported);
    CHECK_THAT(record.error().message,
               (Catch::Contains("names its file through a macro") && Catch::Contains("(CONFIG_HEADER)")) ||
                   Catch::Contains("\"APPLY(FWD)\" passes on FWD"));
  }
}

TEST_CASE("include scan: calls of macros that forward nothing are not probes, whatever their arguments") {
  auto names = included_names(
      "#define VERSION(a, b) ((a) * 100 + (b))\n#define FWD(x) __has_include(x)\n"
      "#if VERSION(MAJOR, MINOR) > 1200 && defined(FWD) && defined(__has_include) && _CCCL_COMPILER(MSVC)\n"
      "#endif\n");
  REQUIRE(names);
  CHECK(names->empty());
}

TEST_CASE("include scan: the CUDA C++ standard library's _CCCL_HAS_INCLUDE probes are followed, not refused") {
  const std::string cccl = "/usr/local/cuda/include/cccl";
  if (!std::filesystem::exists(cccl + "/cuda/std/__cccl/preprocessor.h")) {
    JITCACHE_SKIP("no CUDA toolkit with CCCL headers at /usr/local/cuda/include");
  }
  auto record =
      scan_includes({"kernel.cu", "#include <cuda/std/type_traits>\n", {}, {cccl, "/usr/local/cuda/include"}, {}});
  REQUIRE(record);
  // extended_data_types.h: #if _CCCL_HAS_INCLUDE(<cuda_fp16.h>) ...
  CHECK_THAT(record->text, Catch::Contains("/usr/local/cuda/include/cuda_fp16.h" + std::string(1, '\0') + "file "));
}

TEST_CASE(
    "include scan: a probe in a #define's body is looked for from the directory of every file, where the macro may be used") {
  TempDir dir;
  // HAS_LOCAL is defined in lib/, used in app/: NVRTC looks for "local.cuh" from app/ first.
  write_file(dir.file("inc/lib/defs.cuh"),
             "#define FWD(x) __has_include(x)\n#define HAS_LOCAL FWD(\"local.cuh\")\n"
             "#define HAS_DIRECT __has_include(\"direct.cuh\")\n");
  write_file(dir.file("inc/app/use.cuh"), "#include \"../lib/defs.cuh\"\n#if HAS_LOCAL && HAS_DIRECT\n#endif\n");
  auto record = scan_with(dir, "#include <app/use.cuh>\n");
  REQUIRE(record);
  for (const char* file : {"app/local.cuh", "app/direct.cuh"}) {
    INFO(file);
    CHECK_THAT(record->text, Catch::Contains(dir.file("inc/") + file + std::string(1, '\0') + "absent"));
  }
}

TEST_CASE(
    "include scan: every prefix of a text with unclosed calls, literals and definitions parses, read or refused") {
  const std::string text =
      "#define FWD(_X, ...) __has_include(_X)\n#define V(a...) FWD(a)\n#define ALIAS FWD\n"
      "#if FWD(<a.h>) && V(\"b.h\", 1) && ALIAS(<c.h>) && X('\\'', \"\\\"(\") \\\n  && FWD((<d.h>))\n"
      "#elif 0x1fULL + 1e5 > FWD(<e.h>\n#define BROKEN(x\n#define G(y) FWD(y) FWD(\n#include \"f.h\"\\\r\n";
  for (std::size_t length = 0; length <= text.size(); ++length) {
    INFO(text.substr(0, length));
    auto names = included_names(std::string_view(text).substr(0, length));
    if (!names) CHECK(names.error().code == ErrorCode::unsupported);
  }
}

TEST_CASE("include scan: a <file> passed to a forwarder is expanded as its argument is, before the probe") {
  TempDir dir;
  std::filesystem::create_directories(dir.file("inc/sub"));
  // NVRTC 13.0 probes sub/x.h for F(<DIR/x.h>) (a direct __has_include(<DIR/x.h>) probes DIR/x.h).
  auto record = scan_with(dir, "#define F(x) __has_include(x)\n#define DIR sub\n#if F(<DIR/x.h>)\n#endif\n");
  REQUIRE(record);
  CHECK_THAT(record->text, Catch::Contains(dir.file("inc/sub/x.h") + std::string(1, '\0') + "absent"));
  // NVRTC's own NULL (0) is no text's: the probe cannot be named.
  auto predefined = scan_with(dir, "#define F(x) __has_include(x)\n#if F(<NULL/x.h>)\n#endif\n");
  REQUIRE_FALSE(predefined);
  CHECK_THAT(predefined.error().message, Catch::Contains("NVRTC predefines"));
}
