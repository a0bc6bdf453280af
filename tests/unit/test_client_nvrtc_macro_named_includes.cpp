// Includes named through object-like macros (client/src/nvrtc/macro_named_includes.hpp): every
// definition of every macro in the name is a candidate, and what cannot be expanded safely is
// refused.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <string>

#include <client/src/nvrtc/include_scan.hpp>
#include <client/src/nvrtc/macro_named_includes.hpp>
#include <tests/support/temp_dir.hpp>
#include <tests/support/test_skip.hpp>

using jitcache::client::nvrtc::defined_by_options;
using jitcache::client::nvrtc::included_names;
using jitcache::client::nvrtc::IncludeScanInput;
using jitcache::client::nvrtc::scan_includes;
using jitcache::common::ErrorCode;
using jitcache::testing::TempDir;
using jitcache::testing::write_file;

namespace {

std::string file_entry(const std::string& path) { return path + std::string(1, '\0') + "file "; }

// Thrust's pattern: the system's namespace chosen by #if in one header, a root built from it in
// the same, and each include's name built from the root in another.
void write_thrust_like(TempDir& dir) {
  write_file(dir.file("inc/lib/config.h"),
             "#if SYSTEM == 1\n#  define SYSTEM_NAMESPACE cuda\n#elif SYSTEM == 2\n#  define SYSTEM_NAMESPACE omp\n"
             "#endif\n#define SYSTEM_ROOT lib/system/SYSTEM_NAMESPACE\n");
  write_file(dir.file("inc/lib/tag.h"),
             "#include <lib/config.h>\n#define TAG_HEADER <SYSTEM_ROOT/detail/tag.h>\n#include TAG_HEADER\n"
             "#undef TAG_HEADER\n");
  write_file(dir.file("inc/lib/system/cuda/detail/tag.h"), "#include \"cuda_only.h\"\n");
  write_file(dir.file("inc/lib/system/cuda/detail/cuda_only.h"), "struct cuda_tag {};\n");
  write_file(dir.file("inc/lib/system/omp/detail/tag.h"), "struct omp_tag {};\n");
}

}  // namespace

TEST_CASE("macro-named include: every definition of every macro in the name is followed, and what they include") {
  TempDir dir;
  write_thrust_like(dir);
  auto record = scan_includes({"kernel.cu", "#include <lib/tag.h>\n", {}, {dir.file("inc")}, {}});
  REQUIRE(record);
  CHECK_THAT(record->text, Catch::Contains(file_entry(dir.file("inc/lib/system/cuda/detail/tag.h"))));
  CHECK_THAT(record->text, Catch::Contains(file_entry(dir.file("inc/lib/system/cuda/detail/cuda_only.h"))));
  CHECK_THAT(record->text, Catch::Contains(file_entry(dir.file("inc/lib/system/omp/detail/tag.h"))));
  // The root's macro undefined where it is used: the name as written, probed too.
  CHECK_THAT(record->text,
             Catch::Contains(dir.file("inc/lib/system/SYSTEM_NAMESPACE/detail/tag.h") + std::string(1, '\0')));
}

TEST_CASE("macro-named include: a header reached only through a macro changes the record when it changes") {
  TempDir dir;
  write_thrust_like(dir);
  const IncludeScanInput input{"kernel.cu", "#include <lib/tag.h>\n", {}, {dir.file("inc")}, {}};
  auto before = scan_includes(input);
  REQUIRE(before);
  write_file(dir.file("inc/lib/system/cuda/detail/cuda_only.h"), "struct cuda_tag { int changed; };\n");
  auto after = scan_includes(input);
  REQUIRE(after);
  CHECK(after->text != before->text);
}

TEST_CASE("macro-named include: a definition from the options, or in the same text, is a candidate") {
  TempDir dir;
  write_file(dir.file("inc/from_option.h"), "\n");
  auto record = scan_includes({"kernel.cu", "#include CONFIG\n", {}, {dir.file("inc")}, {}},
                              defined_by_options({"-DCONFIG=<from_option.h>"}));
  REQUIRE(record);
  CHECK_THAT(record->text, Catch::Contains(file_entry(dir.file("inc/from_option.h"))));
  // Each option its own definition, even after a value that ends in a backslash.
  // (NVRTC 13.0 takes these values, and each is a definition of its own.)
  for (const char* other : {"-DOTHER=1\\", "-DOTHER=\"x", "-DOTHER=R\"(", "-DOTHER='x"}) {
    INFO(other);
    auto spliced = scan_includes({"kernel.cu", "#include CONFIG\n", {}, {dir.file("inc")}, {}},
                                 defined_by_options({other, "-DCONFIG=<from_option.h>"}));
    REQUIRE(spliced);
    CHECK_THAT(spliced->text, Catch::Contains(file_entry(dir.file("inc/from_option.h"))));
  }
  auto names = included_names("#define H \"a.h\"\n#define B <b/H2.h>\n#include H\n#include_next B\n");
  REQUIRE(names);
  CHECK(*names == std::vector<std::string>{"a.h", "b/H2.h"});
  // NVRTC's function-like assert stands for itself before no `(`; `cuda` is no macro of NVRTC's.
  auto kept = included_names("#define A <assert.h>\n#define C <cuda/std/cstdint>\n#include A\n#include C\n");
  REQUIRE(kept);
  CHECK(*kept == std::vector<std::string>{"assert.h", "cuda/std/cstdint"});
  CHECK(defined_by_options({"-arch=sm_90", "-DX", "--define-macro=Y=1", "-I/x", "-D=Z=<z.h>"}) ==
        std::vector<std::string>{"X", "Y=1", "Z=<z.h>"});
}

TEST_CASE("macro-named include: what cannot be expanded safely makes the compile NVRTC's own, saying why") {
  const std::pair<const char*, const char*> cases[] = {
      {"#include UNDEFINED\n", "defined as an object-like macro in no text"},
      {"#define F(x) <x.h>\n#include F(a)\n", "function-like"},
      {"#define F(x) <x.h>\n#define H F\n#include H(a)\n", "function-like"},
      {"#define H <a ## b.h>\n#include H\n", "pastes"},
      {"#define H # a\n#include H\n", "stringizes"},
      {"#define H <__SECRET/a.h>\n#include H\n", "NVRTC may predefine it"},
      {"#define H <a b.h>\n#include H\n", "blanks inside"},
      // NVRTC reads v/13000.h, v/1.h, v/0.h: its own definitions, not the texts'.
      {"#define H <v/CUDART_VERSION.h>\n#include H\n", "NVRTC predefines"},
      {"#ifndef __CUDACC_RTC__\n#define __CUDACC_RTC__ x\n#endif\n#define H <v/__CUDACC_RTC__.h>\n#include H\n",
       "NVRTC predefines"},
      {"#define H \"v/NULL.h\"\n#define I <v/NULL.h>\n#include H\n#include I\n", "NVRTC predefines"},
      {"#define H <cudaStreamDefault/a.h>\n#include H\n", "NVRTC predefines"},
      {"#define H <v/assert(1).h>\n#include H\n", "NVRTC predefines"},
      {"#define H 42\n#include H\n", "no file name"},
      {"#define A 1\n#define A 2\n#define A 3\n#define A 4\n#define A 5\n#define A 6\n#define A 7\n"
       "#define H <A/A/A.h>\n#include H\n",
       "more than 64 candidate names"},
  };
  for (const auto& [text, reason] : cases) {
    INFO(text);
    auto names = included_names(text);
    REQUIRE_FALSE(names);
    CHECK(names.error().code == ErrorCode::unsupported);
    CHECK_THAT(names.error().message, Catch::Contains(reason));
  }
}

TEST_CASE("macro-named include: a macro defined only in a file found through another macro-named include is used") {
  TempDir dir;
  write_file(dir.file("inc/a.h"), "#define B_HEADER <b.h>\n");
  write_file(dir.file("inc/b.h"), "int b;\n");
  auto record = scan_includes(
      {"kernel.cu", "#define A_HEADER <a.h>\n#include B_HEADER\n#include A_HEADER\n", {}, {dir.file("inc")}, {}});
  if (!record) FAIL(record.error().message);
  CHECK_THAT(record->text, Catch::Contains(file_entry(dir.file("inc/b.h"))));
}

TEST_CASE("macro-named include: a macro defined in terms of itself is expanded once, as the preprocessor does") {
  auto names = included_names("#define H <H.h>\n#include H\n");
  REQUIRE(names);
  CHECK(*names == std::vector<std::string>{"H.h"});
}

TEST_CASE("macro-named include: Thrust's system headers in the toolkit's CCCL are followed, not refused") {
  const std::string include = "/usr/local/cuda/include";
  if (!std::filesystem::exists(include + "/cccl/thrust/iterator/detail/device_system_tag.h")) {
    JITCACHE_SKIP("no CUDA toolkit with Thrust at /usr/local/cuda/include");
  }
  auto record = scan_includes({"kernel.cu",
                               "#include <thrust/complex.h>\n#include <thrust/execution_policy.h>\n",
                               {},
                               {include + "/cccl", include},
                               {}});
  if (!record) FAIL(record.error().message);
  CHECK_THAT(record->text, Catch::Contains(file_entry(include + "/cccl/thrust/system/cuda/detail/execution_policy.h")));
  CHECK_THAT(record->text, Catch::Contains(file_entry(include + "/cccl/thrust/system/cpp/detail/execution_policy.h")));
}
