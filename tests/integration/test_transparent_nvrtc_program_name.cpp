// Programs named by a path in a directory of their own (CuPy names each by a fresh temporary
// directory, removed before the compile) under libjitcache-preload.so with the toolkit's real NVRTC:
// the key relative to the program's directory (proto/nvrtc_program_directory.hpp) lets another
// directory's process hit, with the answers NVRTC gives that name; a compile whose output or log
// holds the name is keyed with it (docs/cache-key.md "The program's name"). NVRTC needs no GPU.
#include <catch2/catch.hpp>

#include <string>
#include <utility>
#include <vector>

#include <tests/support/child_process.hpp>
#include <tests/support/daemon_process.hpp>
#include <tests/support/daemon_stats.hpp>
#include <tests/support/nvrtc_program_run.hpp>
#include <tests/support/temp_dir.hpp>
#include <tests/support/transparent_check.hpp>

using jitcache::testing::ChildResult;
using jitcache::testing::DaemonProcess;
using jitcache::testing::EnvChange;
using jitcache::testing::stat_value;
using jitcache::testing::TempDir;
using jitcache::testing::write_file;
using jitcache::testing::nvrtc::compile_args;
using jitcache::testing::nvrtc::run_program;
using jitcache::testing::nvrtc::Sources;
using jitcache::testing::transparent::run_env;

namespace {

// The last line of the kernels whose logs are looked at: it uses the header under -I.
const std::string k_kernel_tail = "template <typename T> __global__ void scale(T* x) { x[0] *= (T)HEADER_VALUE; }\n";

// Two programs' names with the same last part, in the directories given under `names`.
std::pair<std::string, std::string> two_names(const TempDir& names, const std::string& first_directory,
                                              const std::string& second_directory) {
  return {names.file(first_directory + "/0f3c.cubin.cu"), names.file(second_directory + "/0f3c.cubin.cu")};
}

// The kernel compiled under `name`, through the daemon, or by NVRTC alone.
struct NamedRuns {
  Sources& sources;
  TempDir state;
  DaemonProcess daemon{state};
  std::string expression = "scale<float>";  // the name expression the program adds
  NamedRuns(Sources& compiled) : sources(compiled) { daemon.start(); }
  ChildResult run(const std::string& name, bool cached) {
    std::vector<EnvChange> env = cached ? run_env(daemon.socket_path(), true) : run_env(state.file("none.sock"), false);
    env.push_back({"NVRTC_PROGRAM_NAME", name});
    ChildResult result = run_program({sources.kernel, expression, "-I" + sources.include_dir, "-arch=sm_90"}, env);
    REQUIRE(result.status == 0);
    return result;
  }
  std::int64_t stat(const char* name) {
    auto client = daemon.client();
    return stat_value(client, name);
  }
  // For two names whose plain compiles differ (the name reaches the code): `first`'s result, stored,
  // is not served for `second`, which gets what NVRTC gives it. Returns that.
  std::string check_keyed_with_name(const std::string& first, const std::string& second) {
    const ChildResult plain_second = run(second, false);
    REQUIRE(run(first, false).output != plain_second.output);
    run(first, true);
    const auto hits = stat("hits");
    CHECK(run(second, true).output == plain_second.output);
    CHECK(stat("hits") == hits);
    return plain_second.output;
  }
};

}  // namespace

TEST_CASE("transparent nvrtc names: (g) a program in another removed temporary directory is a hit, answered as NVRTC") {
  Sources sources;
  NamedRuns runs(sources);
  TempDir names;
  const auto [first, second] = two_names(names, "tmp_a1b2", "tmp_z9y8");
  const ChildResult stored = runs.run(first, true);
  CHECK(stored.output == runs.run(first, false).output);
  const auto hits = runs.stat("hits");
  const ChildResult served = runs.run(second, true);
  CHECK(served.output == runs.run(second, false).output);
  CHECK(runs.stat("hits") == hits + 1);
  CHECK(runs.stat("entries") == 1);
}

TEST_CASE(
    "transparent nvrtc names: (g) a kernel whose code holds the name (assert, a header's __FILE__) is keyed with it") {
  const char* kernels[] = {
      "#include \"memory_header.cuh\"\n#include <scale_value.cuh>\n"
      "template <typename T> __global__ void scale(T* x) { assert(x); x[0] *= (T)(HEADER_VALUE + MEMORY_VALUE); }\n",
      "#include \"memory_header.cuh\"\n#include <scale_value.cuh>\n#include <where.cuh>\n"
      "template <typename T> __global__ void scale(T* x) { x[0] = (T)(HERE()[sizeof(HERE()) - 19] + HEADER_VALUE + MEMORY_VALUE); }\n"};
  for (const char* kernel : kernels) {
    INFO(kernel);
    Sources sources(kernel);
    write_file(sources.include_dir + "/where.cuh", "#define HERE() WHERE_IMPL\n");
    write_file(sources.include_dir + "/where_impl.cuh", "#define WHERE_IMPL __FILE__\n");
    write_file(sources.include_dir + "/scale_value.cuh", "#define HEADER_VALUE 3\n#include <where_impl.cuh>\n");
    NamedRuns runs(sources);
    TempDir names;  // the names differ in their directory only, 19 characters from their end
    const auto [first, second] = two_names(names, "tmp_a1b2", "tmp_z9y8");
    const std::string plain_second = runs.check_keyed_with_name(first, second);
    const auto hits = runs.stat("hits");
    CHECK(runs.run(second, true).output == plain_second);  // its own key: a hit now
    CHECK(runs.stat("hits") == hits + 1);
  }
}

TEST_CASE(
    "transparent nvrtc names: (g) a warning names the program in the log: another directory's program is a hit, "
    "answered the log NVRTC gives its own name") {
  // A warning in the source ("<name>(3): warning") and one in a header, instantiated from the
  // source ("at line 4 of <name>"); the directories differ in length.
  Sources sources(
      "#include \"memory_header.cuh\"\n#include <scale_value.cuh>\n#include <pointless.cuh>\n"
      "template <typename T> __global__ void scale(T* x) { int unused; x[0] *= (T)(HEADER_VALUE + MEMORY_VALUE + "
      "nonnegative(1u)); }\n");
  write_file(sources.include_dir + "/pointless.cuh",
             "template <typename T> __device__ bool nonnegative(T x) { return x >= 0; }\n");
  NamedRuns runs(sources);
  TempDir names;
  const auto [first, second] = two_names(names, "tmp_a1b2", "tmp_z9y8x7w6v5u4t3s2r1");
  const ChildResult plain_first = runs.run(first, false);
  REQUIRE_THAT(plain_first.output, Catch::Contains(first + "(4): warning"));
  REQUIRE_THAT(plain_first.output, Catch::Contains("at line 4 of " + first));
  CHECK(runs.run(first, true).output == plain_first.output);
  const auto hits = runs.stat("hits");
  const ChildResult plain_second = runs.run(second, false);
  CHECK(runs.run(second, true).output == plain_second.output);
  CHECK(runs.stat("hits") == hits + 1);
  CHECK(runs.stat("entries") == 1);
  CHECK(runs.run(first, true).output == plain_first.output);  // and back
  CHECK(runs.stat("hits") == hits + 2);
}

TEST_CASE(
    "transparent nvrtc names: (g) a log that names the directory for another reason (a #warning's text in the "
    "source or a header, a directory with a space) is keyed with the name") {
  TempDir names;
  const auto [first, second] = two_names(names, "tmp_a1b2", "tmp_z9y8");
  SECTION("the source's #warning quotes the first program's name") {
    Sources sources(("#include <scale_value.cuh>\n#warning " + first + "\n" + k_kernel_tail).c_str());
    NamedRuns runs(sources);
    runs.check_keyed_with_name(first, second);
  }
  SECTION("a header on disk's #warning quotes it") {
    Sources sources(("#include <scale_value.cuh>\n#include <note.cuh>\n#warning here\n" + k_kernel_tail).c_str());
    write_file(sources.include_dir + "/note.cuh", "#warning " + first + "\n");
    NamedRuns runs(sources);
    runs.check_keyed_with_name(first, second);
  }
  SECTION("the directories hold a space") {
    Sources sources(("#include <scale_value.cuh>\n#warning here\n" + k_kernel_tail).c_str());
    NamedRuns runs(sources);
    const auto [first, second] = two_names(names, "tmp a1", "tmp z9");
    runs.check_keyed_with_name(first, second);
  }
}

TEST_CASE("transparent nvrtc names: (g) a name expression naming __BASE_FILE__ is keyed with the name") {
  // NVRTC compiles the expression in the program, where __BASE_FILE__ is the program's name: the
  // lowered name and the PTX hold its length, never the directory itself.
  Sources sources("template <int N> __global__ void scale(int* p) { *p = N; }\n");
  NamedRuns runs(sources);
  runs.expression = "scale<sizeof(__BASE_FILE__)>";
  TempDir names;
  const auto [first, second] = two_names(names, "tmp_a1", "tmp_z9y8x7");
  runs.check_keyed_with_name(first, second);  // the name's length reaches the code
}

TEST_CASE(
    "transparent nvrtc names: (g) a header's member initializer passing __builtin_FILE() to a call is keyed with it") {
  // The initializer is evaluated for the program's own `S s`: the file is the program's name, and
  // the PTX holds only its last characters, never the whole directory.
  Sources sources(
      "#include <member.cuh>\n__device__ char g[8];\n"
      "__global__ void scale(int* p) { S s; for (int i = 0; i < 6; ++i) g[i] = s.f[i]; }\n");
  write_file(sources.include_dir + "/member.cuh",
             "__host__ __device__ constexpr const char* tail(const char* s) {\n"
             "  const char* t = s; while (*t) ++t; return t - 16; }\n"
             "struct S { const char* f = tail(__builtin_FILE()); };\n");
  NamedRuns runs(sources);
  runs.expression = "-";
  TempDir names;
  const auto [first, second] = two_names(names, "tmp_a1", "tmp_z9");
  runs.check_keyed_with_name(first, second);  // "a1/0f3" and "z9/0f3"
}

TEST_CASE(
    "transparent nvrtc names: (g) a source including its own file, whose __FILE__ is the name, is keyed with it") {
  Sources sources("#include \"0f3c.cubin.cu\"\n__global__ void scale(int* p) { *p = n; }\n");
  NamedRuns runs(sources);
  runs.expression = "-";
  TempDir names;
  const auto [first, second] = two_names(names, "tmp_a1", "tmp_z9y8x7");
  for (const std::string& name : {first, second}) write_file(name, "__device__ int n = sizeof(__FILE__);\n");
  runs.check_keyed_with_name(first, second);  // the name's length reaches the code
}

TEST_CASE(
    "transparent nvrtc names: (g) a log that spells the first program's name from pieces no text holds whole (a "
    "spliced #line, joined string literals) is answered as NVRTC answers the second") {
  // The texts name the first program only in pieces, so no text holds its directory; NVRTC's log
  // writes that name for every name the program is given, where a cut log would put the caller's.
  TempDir names;
  const auto [first, second] = two_names(names, "tmp_a1b2", "tmp_z9y8");
  const std::size_t half = first.rfind("a1b2");
  std::string source;
  SECTION("a #line directive whose name is spliced by a backslash-newline") {
    source = "#line 1 \"" + first.substr(0, half) + "\\\n" + first.substr(half) + "\"\n#include <scale_value.cuh>\n" +
             "#warning here\n" + k_kernel_tail;
  }
  SECTION("a #pragma message of two string literals") {
    source = "#include <scale_value.cuh>\n#pragma message(\"" + first.substr(0, half) + "\" \"" + first.substr(half) +
             "\")\n" + k_kernel_tail;
  }
  Sources sources(source.c_str());
  NamedRuns runs(sources);
  const ChildResult plain_first = runs.run(first, false);
  REQUIRE_THAT(plain_first.output, Catch::Contains(first + "(1)") || Catch::Contains(first + "(2)"));
  const ChildResult plain_second = runs.run(second, false);
  REQUIRE_THAT(plain_second.output, Catch::Contains("\"" + first + "\"") || Catch::Contains(first + "(2)"));
  CHECK(runs.run(first, true).output == plain_first.output);
  CHECK(runs.run(second, true).output == plain_second.output);
}

TEST_CASE(
    "transparent nvrtc names: (g) a compile error naming the program (its place and the closing line) is a hit in "
    "another directory, answered the result and log NVRTC gives its own name") {
  // "<name>(1): catastrophic error: cannot open source file" for a quoted include looked for beside
  // the program, and "... detected in the compilation of "<name>"." after it.
  Sources sources("#include \"absent_beside.cuh\"\ntemplate <typename T> __global__ void scale(T* x) {}\n");
  NamedRuns runs(sources);
  TempDir names;
  const auto [first, second] = two_names(names, "tmp_a1b2", "tmp_z9y8x7w6");
  const ChildResult plain_first = runs.run(first, false);
  REQUIRE_THAT(plain_first.output, Catch::Contains("compile=6") && Catch::Contains("compilation of \"" + first));
  CHECK(runs.run(first, true).output == plain_first.output);
  const auto hits = runs.stat("hits");
  CHECK(runs.run(second, true).output == runs.run(second, false).output);
  CHECK(runs.stat("hits") == hits + 1);
}
