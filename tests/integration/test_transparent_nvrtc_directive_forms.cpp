// Every spelling of an include that NVRTC follows is in the include record (docs/cache-key.md "Files
// read from disk"): a comment between `#` and `include` or before the `#`, the digraph `%:`, a form
// feed after the `#`, a comment between `__has_include` and its parenthesis. NVRTC 13.0 reads the
// header in each (tests/programs/nvrtc_compile.c prints its answers), so a header changed between two
// runs must give the new output, never the answer stored for the old header: a key without the
// header would serve that answer to every program of the same source and options, another uid's
// included when the entry is shared.
#include <catch2/catch.hpp>

#include <filesystem>
#include <string>
#include <vector>

#include <tests/support/child_process.hpp>
#include <tests/support/daemon_process.hpp>
#include <tests/support/daemon_stats.hpp>
#include <tests/support/nvrtc_daemon.hpp>
#include <tests/support/nvrtc_program_run.hpp>
#include <tests/support/temp_dir.hpp>
#include <tests/support/transparent_check.hpp>

using jitcache::testing::ChildResult;
using jitcache::testing::stat_value;
using jitcache::testing::TempDir;
using jitcache::testing::write_file;
using jitcache::testing::nvrtc::NvrtcDaemon;

namespace {

struct Form {
  const char* what;
  const char* source;                 // reads `value.cuh` from its -I directory, which defines VALUE
  bool first_without_header = false;  // the first run has no value.cuh at all
};

// Each compiles with NVRTC 13.0 and uses the header's VALUE (checked below against the plain run).
const std::vector<Form> k_forms = {
    {"a comment between # and include", "#/* x */include \"value.cuh\"\n"},
    {"a comment before the #", "/* x */ #include \"value.cuh\"\n"},
    {"a comment that ends on the directive's line", "/* one\n   two */ #include \"value.cuh\"\n"},
    {"the digraph %:", "%:include \"value.cuh\"\n"},
    {"a form feed after the #", "#\finclude \"value.cuh\"\n"},
    {"a comment between __has_include and its (",
     "#if __has_include /* x */ (\"value.cuh\")\n#define VALUE 7\n#else\n#define VALUE 5\n#endif\n", true},
};

}  // namespace

TEST_CASE("transparent nvrtc: (g) a header included through any spelling NVRTC follows is in the key") {
  NvrtcDaemon cache;
  auto client = cache.client();
  for (const Form& form : k_forms) {
    INFO(form.what);
    TempDir dir;
    const std::string kernel = dir.file("kernel.cu");
    const std::string include_dir = dir.file("include");
    write_file(kernel, std::string(form.source) + "extern \"C\" __global__ void k(int* p) { *p = VALUE; }\n");
    const std::vector<std::string> args = {kernel, "-", "-I" + include_dir, "-arch=sm_90"};
    const auto cached = [&] { return cache.cached(args); };
    const auto plain = [&] { return cache.plain(args); };

    std::filesystem::create_directories(include_dir);
    if (!form.first_without_header) write_file(include_dir + "/value.cuh", "#define VALUE 41\n");
    const ChildResult first = cached();
    REQUIRE(first.status == 0);
    REQUIRE_THAT(first.output, Catch::Contains("compile=0"));

    write_file(include_dir + "/value.cuh", "#define VALUE 42\n");
    const ChildResult changed_plain = plain();
    REQUIRE(changed_plain.output != first.output);  // NVRTC reads the header in this form
    const ChildResult changed = cached();
    CHECK(changed.output == changed_plain.output);
  }
  CHECK(stat_value(client, "hits") == 0);
}

// NVRTC 13.0 takes `-I=DIR` as DIR, and trims the blanks around an include path (`-I DIR`, `-IDIR `,
// `--include-path=DIR `): the directory the cache probes must be the one NVRTC searches, or the
// compile must be NVRTC's own.
TEST_CASE("transparent nvrtc: (g) an include path spelled -I=DIR or with blanks is searched where NVRTC searches") {
  NvrtcDaemon cache;
  auto client = cache.client();
  for (const std::string& spelling : {std::string("-I="), std::string("-I "), std::string("-I  ")}) {
    for (const bool trailing_blank : {false, true}) {
      TempDir dir;
      const std::string include_dir = dir.file("include");
      const std::string option = spelling + include_dir + (trailing_blank ? " " : "");
      INFO("option \"" << option << "\"");
      write_file(dir.file("kernel.cu"),
                 "#include <value.cuh>\nextern \"C\" __global__ void k(int* p) { *p = VALUE; }\n");
      const std::vector<std::string> args = {dir.file("kernel.cu"), "-", option, "-arch=sm_90"};
      write_file(include_dir + "/value.cuh", "#define VALUE 41\n");
      const ChildResult first = cache.cached(args);
      REQUIRE(first.status == 0);
      REQUIRE_THAT(first.output, Catch::Contains("compile=0"));  // NVRTC found the header
      write_file(include_dir + "/value.cuh", "#define VALUE 42\n");
      const ChildResult changed_plain = cache.plain(args);
      REQUIRE(changed_plain.output != first.output);
      CHECK(cache.cached(args).output == changed_plain.output);
    }
  }
  {
    TempDir dir;
    const std::string include_dir = dir.file("include");
    write_file(dir.file("kernel.cu"), "#include <value.cuh>\nextern \"C\" __global__ void k(int* p) { *p = VALUE; }\n");
    const std::vector<std::string> args = {dir.file("kernel.cu"), "-", "--include-path=" + include_dir + " ",
                                           "-arch=sm_90"};
    write_file(include_dir + "/value.cuh", "#define VALUE 41\n");
    REQUIRE(cache.cached(args).status == 0);
    write_file(include_dir + "/value.cuh", "#define VALUE 42\n");
    const ChildResult changed_plain = cache.plain(args);
    CHECK(cache.cached(args).output == changed_plain.output);
  }
  CHECK(stat_value(client, "hits") == 0);
}

// NVRTC 13.0 looks for an include whose name has no suffix (`<foo>`, `"cuda/std/type_traits"`) as
// the name, then as the name with ".stdh" (EDG's include suffixes; strace -e stat of the program),
// in each place it searches: a `foo.stdh` that appears in an earlier -I directory shadows the `foo`
// of a later one.
TEST_CASE("transparent nvrtc: (g) an include without a suffix found as NAME.stdh in an earlier -I is a miss") {
  NvrtcDaemon cache;
  auto client = cache.client();
  TempDir dir;
  const std::string early = dir.file("early");
  const std::string late = dir.file("late");
  std::filesystem::create_directories(early);
  write_file(dir.file("kernel.cu"), "#include <value>\nextern \"C\" __global__ void k(int* p) { *p = VALUE; }\n");
  write_file(late + "/value", "#define VALUE 41\n");
  const std::vector<std::string> args = {dir.file("kernel.cu"), "-", "-I" + early, "-I" + late, "-arch=sm_90"};
  const ChildResult first = cache.cached(args);
  REQUIRE(first.status == 0);
  REQUIRE_THAT(first.output, Catch::Contains("compile=0"));
  write_file(early + "/value.stdh", "#define VALUE 42\n");
  const ChildResult shadowed_plain = cache.plain(args);
  REQUIRE(shadowed_plain.output != first.output);  // NVRTC reads early/value.stdh
  CHECK(cache.cached(args).output == shadowed_plain.output);
  CHECK(stat_value(client, "hits") == 0);
}
