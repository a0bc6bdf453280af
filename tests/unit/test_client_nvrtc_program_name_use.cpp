// Whether an NVRTC compile's output may hold its program's name (client/src/nvrtc/
// program_name_use.hpp), and the key relative to the program's directory that depends on it
// (proto/nvrtc_program_directory.hpp): every way a text can reach the name says "may", and only
// then is the compile keyed with its name.
#include <catch2/catch.hpp>

#include <stdlib.h>

#include <string>
#include <utility>
#include <vector>

#include <client/src/nvrtc/program_name_use.hpp>
#include <client/src/nvrtc/scan_memo.hpp>
#include <proto/digest.hpp>
#include <proto/nvrtc_key.hpp>
#include <proto/nvrtc_program_directory.hpp>
#include <tests/support/temp_dir.hpp>

using namespace jitcache::client::nvrtc;
using jitcache::proto::record_relative_to_program;
using jitcache::testing::TempDir;
using jitcache::testing::write_file;

namespace {

// Header files on disk and the include record that names them as the scan would.
struct Disk {
  TempDir dir;
  std::string record;
  std::string add(const std::string& name, const std::string& text) {
    const std::string path = dir.file(name);
    write_file(path, text);
    record += path + '\0' + "file " + jitcache::proto::to_hex(jitcache::proto::sha256(jitcache::proto::as_bytes(text)));
    record.push_back('\n');
    return path;
  }
};

// The scan memo off, and nothing remembered in the process: each call reads the files.
struct NoMemo {
  NoMemo() {
    ::setenv("JITCACHE_NVRTC_SCAN_MEMO", "0", 1);
    scan_memo_reset();
    forget_program_name_facts();
  }
  ~NoMemo() {
    ::unsetenv("JITCACHE_NVRTC_SCAN_MEMO");
    scan_memo_reset();
    forget_program_name_facts();
  }
};

const std::vector<std::pair<std::string, std::string>> k_no_headers;
const std::vector<std::string> k_no_expressions;

// An include record of (path, state) lines.
std::string record_of(const std::vector<std::pair<std::string, std::string>>& lines) {
  std::string record;
  for (const auto& [path, state] : lines) record += path + '\0' + state + '\n';
  return record;
}

bool may_name(std::string_view source, const Disk& disk,
              const std::vector<std::pair<std::string, std::string>>& headers = k_no_headers,
              std::string_view definitions = {}, const std::vector<std::string>& expressions = k_no_expressions) {
  return output_may_name_program({"/tmp/tmp_a1/k.cu", source, headers, definitions, expressions}, disk.record)
      .has_value();
}

}  // namespace

TEST_CASE("program name use: a kernel that expands nothing naming its file cannot hold the name") {
  NoMemo off;
  Disk disk;
  disk.add("a.cuh", "#define SCALE(x) ((x) * 2)\ninline __device__ int twice(int x) { return SCALE(x); }\n");
  CHECK_FALSE(may_name("#include <a.cuh>\n__global__ void k(int* p) { *p = SCALE(*p); } // assert(p)\n", disk));
}

TEST_CASE("program name use: the source naming __FILE__, __BASE_FILE__, __builtin_FILE or the builtin assert may") {
  NoMemo off;
  Disk disk;
  for (const char* word :
       {"__FILE__", "__FILE_NAME__", "__BASE_FILE__", "__builtin_FILE()", "assert(p)", "__builtin_source_location()"}) {
    INFO(word);
    CHECK(may_name(std::string("__global__ void k(int* p) { ") + word + "; }\n", disk));
  }
}

TEST_CASE("program name use: the program's own file on disk, which the source may include, counts as the source") {
  NoMemo off;
  Disk disk;
  // Its __FILE__ is the program's name: `#include "k.cu"` beside the name reads it.
  const std::string program = disk.add("k.cu", "__device__ int n = sizeof(__FILE__);\n");
  const char* source = "#include \"k.cu\"\n__global__ void kern(int* p) { *p = n; }\n";
  const std::vector<std::string> expressions;
  CHECK(output_may_name_program({program, source, k_no_headers, {}, expressions}, disk.record).has_value());
  Disk clean;
  const std::string clean_program = clean.add("k.cu", "__device__ int n = 4;\n");
  CHECK_FALSE(
      output_may_name_program({clean_program, source, k_no_headers, {}, expressions}, clean.record).has_value());
  write_file(clean_program, "__device__ int n = sizeof(__FILE__);\n");  // no longer what the scan read
  CHECK(output_may_name_program({clean_program, source, k_no_headers, {}, expressions}, clean.record).has_value());
}

TEST_CASE("program name use: a name expression naming __BASE_FILE__, or a header's macro over it, may") {
  NoMemo off;
  Disk disk;
  disk.add("length.cuh", "#define NAME_LENGTH sizeof(__BASE_FILE__)\n");
  const char* source = "template <int N> __global__ void f(int* p) { *p = N; }\n";
  // NVRTC compiles the expression in the program, where __BASE_FILE__ is the name.
  CHECK(may_name(source, disk, k_no_headers, {}, {"f<sizeof(__BASE_FILE__)>"}));
  CHECK(may_name(source, disk, k_no_headers, {}, {"f<NAME_LENGTH>"}));
  CHECK_FALSE(may_name(source, disk, k_no_headers, {}, {"f<3>"}));
}

TEST_CASE(
    "program name use: a macro of a file on disk that reaches __FILE__ through another file, used by the source") {
  NoMemo off;
  Disk disk;
  disk.add("where.cuh", "#define WHERE_IMPL __FILE__\n");
  disk.add("check.cuh", "#define CHECK(x) do { if (!(x)) report(WHERE); } while (0)\n#define WHERE WHERE_IMPL\n");
  CHECK(may_name("__global__ void k(int* p) { CHECK(p); }\n", disk));
  // Used only by the headers themselves, it expands to their own names, which the key holds.
  CHECK_FALSE(may_name("__global__ void k(int* p) { *p = 1; }\n", disk));
}

TEST_CASE("program name use: a macro that pastes tokens, used by the source, may make __FILE__") {
  NoMemo off;
  Disk disk;
  disk.add("cat.cuh", "#define CAT_IMPL(a, b) a##b\n#define CAT(a, b) CAT_IMPL(a, b)\n");
  CHECK(may_name("#include <cat.cuh>\n__global__ void k(const char** p) { *p = CAT(__FI, LE__); }\n", disk));
  CHECK(may_name("#define MINE(a, b) a ## b\n__global__ void k(int* p) { *p = 1; }\n", disk));
  CHECK_FALSE(may_name("#include <cat.cuh>\n__global__ void k(int* p) { *p = 1; }\n", disk));
  const std::vector<std::pair<std::string, std::string>> headers;
  const auto why = output_may_name_program(
      {"/tmp/tmp_a1/k.cu", "__global__ void k(int* p) { assert(p); }\n", headers, {}, k_no_expressions}, disk.record);
  REQUIRE(why);
  CHECK(*why == "the source uses assert");
}

TEST_CASE(
    "program name use: a default argument of __builtin_FILE() (source_location::current) may where it is called") {
  NoMemo off;
  Disk disk;
  disk.add("builtin.h", "#define MY_BUILTIN_FILE() __builtin_FILE()\n");
  disk.add("location.h",
           "struct where {\n  static where current(\n    const char* f = MY_BUILTIN_FILE());\n};\n"
           "inline void log(const char* s = \"(\") {}\n");
  // Declared, never called by the program: its own calls would take the header's name.
  CHECK_FALSE(may_name("__global__ void k(int* p) { *p = 1; }\n", disk));
  CHECK(may_name("__global__ void k(int* p) { auto w = where::current(); }\n", disk));
  // Through a macro of the program's own.
  CHECK(may_name("#define HERE where::current()\n__global__ void k(int* p) { }\n", disk));
  // __BASE_FILE__ is the program's name in whichever text it stands, in parentheses or not.
  Disk base;
  base.add("base.h", "inline void g(const char*) {}\ninline void f() { g(__BASE_FILE__); }\n");
  CHECK(may_name("__global__ void k(int* p) { *p = 1; }\n", base));
  // A lambda's default argument: whose call it takes cannot be named, so "may".
  Disk lambda;
  lambda.add("lambda.h", "inline auto here = [](const char* f = __builtin_FILE()) { return f; };\n");
  CHECK(may_name("__global__ void k(int* p) { *p = 1; }\n", lambda));
  // A default member initializer takes the file of whoever constructs it: not followed, so "may".
  disk.add("member.h", "struct member { const char* f = __builtin_FILE(); };\n");
  CHECK(may_name("__global__ void k(int* p) { *p = 1; }\n", disk));
}

TEST_CASE("program name use: a default member initializer passing __builtin_FILE() to a call may") {
  NoMemo off;
  // In a call's parentheses, but no default argument: evaluated for whoever constructs a `member`,
  // which names neither `tail` nor anything the scan could follow.
  for (const char* initializer :
       {"tail(__builtin_FILE())", "tail(1, __builtin_FILE())", "tail(n = 1, __builtin_FILE())"}) {
    INFO(initializer);
    Disk disk;
    disk.add("member.h", std::string("struct member { const char* f = ") + initializer + "; };\n");
    CHECK(may_name("#include <member.h>\n__global__ void k(int* p) { member m; *p = m.f[0]; }\n", disk));
  }
  // A default argument after another parameter, or one that passes it on, is still followed.
  Disk defaults;
  defaults.add("defaults.h", "void where(int n, const char* f = tail(__builtin_FILE()));\n");
  CHECK_FALSE(may_name("__global__ void k(int* p) { *p = 1; }\n", defaults));
  CHECK(may_name("__global__ void k(int* p) { where(1); }\n", defaults));
}

TEST_CASE("program name use: a definition in memory that reaches the name may, wherever it is used") {
  NoMemo off;
  Disk disk;
  const std::string source = "__global__ void k(int* p) { *p = 1; }\n";
  CHECK(may_name(source, disk, {{"h.cuh", "#define HERE __FILE__\n"}}));
  CHECK(may_name(source, disk, k_no_headers, "#define HERE __FILE__\n"));
  CHECK(may_name("#define GUARD(x) assert(x)\n" + source, disk));
  CHECK_FALSE(may_name(source, disk, {{"h.cuh", "#define HERE 1\n"}}, "#define VALUE 3\n"));
}

TEST_CASE("program name use: a file that no longer has its recorded digest may, unless its facts are remembered") {
  TempDir memo;
  ::setenv("JITCACHE_NVRTC_SCAN_MEMO_DIR", memo.path().c_str(), 1);
  scan_memo_reset();
  forget_program_name_facts();
  Disk disk;
  const std::string header = disk.add("a.cuh", "#define VALUE 1\n");
  const std::string source = "#include <a.cuh>\n__global__ void k(int* p) { *p = VALUE; }\n";
  CHECK_FALSE(may_name(source, disk));
  write_file(header, "#define VALUE __FILE__\n");  // the record still names the first content
  forget_program_name_facts();
  CHECK_FALSE(may_name(source, disk));  // a new process: the memo's facts of the recorded content
  {
    NoMemo off;
    CHECK(may_name(source, disk));  // read again: another digest
  }
  ::unsetenv("JITCACHE_NVRTC_SCAN_MEMO_DIR");
  scan_memo_reset();
}

TEST_CASE("program directory: the record relative to the program's directory") {
  const std::string record_a =
      record_of({{"/tmp/tmpA/k.cu", "absent"}, {"/tmp/tmpA/x.h", "absent"}, {"/inc/x.h", "file 00"}});
  const std::string record_b =
      record_of({{"/tmp/tmpB/k.cu", "absent"}, {"/tmp/tmpB/x.h", "absent"}, {"/inc/x.h", "file 00"}});
  const auto a = record_relative_to_program(record_a, "/tmp/tmpA/k.cu");
  const auto b = record_relative_to_program(record_b, "/tmp/tmpB/k.cu");
  REQUIRE(a);
  CHECK(a == b);
  // A header found beside the program names the directory in its own __FILE__.
  const std::string beside = record_of({{"/tmp/tmpA/k.cu", "absent"}, {"/tmp/tmpA/x.h", "file 00"}});
  CHECK_FALSE(record_relative_to_program(beside, "/tmp/tmpA/k.cu"));
  // The program's own file there is no include.
  const std::string itself = record_of({{"/tmp/tmpA/k.cu", "file 00"}});
  CHECK(record_relative_to_program(itself, "/tmp/tmpA/k.cu"));
  // No directory, or "/": nothing to take out.
  CHECK_FALSE(record_relative_to_program(record_of({{"k.cu", "absent"}}), "k.cu"));
  CHECK_FALSE(record_relative_to_program(record_of({{"/k.cu", "absent"}}), "/k.cu"));
  // A path outside that reads like one inside stays apart.
  const auto outside = record_relative_to_program(record_of({{"Dk.cu", "absent"}}), "/tmp/tmpA/k.cu");
  const auto inside = record_relative_to_program(record_of({{"/tmp/tmpA/k.cu", "absent"}}), "/tmp/tmpA/k.cu");
  CHECK(outside != inside);
}

TEST_CASE("program directory: a result whose log or output holds the directory, as bytes or as PTX writes it") {
  using jitcache::proto::NvrtcOutput;
  using jitcache::proto::NvrtcResult;
  using jitcache::proto::result_names_program;
  const auto with = [](NvrtcOutput which, const std::string& text) {
    NvrtcResult result;
    result.output(which).bytes.assign(text.begin(), text.end());
    return result;
  };
  CHECK_FALSE(result_names_program(with(NvrtcOutput::log, ""), "/tmp/ab/k.cu"));
  CHECK(result_names_program(with(NvrtcOutput::log, "/tmp/ab/k.cu(1): warning #177-D"), "/tmp/ab/k.cu"));
  CHECK(result_names_program(with(NvrtcOutput::ptx, ".b8 $str[7] = {47, 116, 109, 112, 47, 97, 98};"), "/tmp/ab/k.cu"));
  CHECK_FALSE(result_names_program(with(NvrtcOutput::ptx, ".b8 $str[4] = {47, 116, 109, 112};"), "/tmp/ab/k.cu"));
}

TEST_CASE("program directory: two directories give one relative key, never the key with the name") {
  jitcache::proto::NvrtcCompileInput input;
  input.identity.major = 13;
  input.source = "__global__ void k() {}";
  input.options.arch = "sm_90";
  input.name = "/tmp/tmpA/k.cu";
  input.include_record = record_of({{"/tmp/tmpA/k.cu", "absent"}});
  const auto relative_a = record_relative_to_program(input.include_record, input.name);
  const auto key_a = jitcache::proto::nvrtc_program_relative_key(input, *relative_a);
  const auto named_a = jitcache::proto::nvrtc_key(input);
  input.name = "/tmp/tmpB/k.cu";
  input.include_record = record_of({{"/tmp/tmpB/k.cu", "absent"}});
  const auto relative_b = record_relative_to_program(input.include_record, input.name);
  const auto key_b = jitcache::proto::nvrtc_program_relative_key(input, *relative_b);
  const auto named_b = jitcache::proto::nvrtc_key(input);
  REQUIRE(key_a);
  REQUIRE(key_b);
  REQUIRE(named_a);
  REQUIRE(named_b);
  CHECK(key_a->fields == key_b->fields);
  CHECK(named_a->fields != named_b->fields);
  CHECK(key_a->fields != named_a->fields);
  // Another base name is another program.
  input.name = "/tmp/tmpB/other.cu";
  input.include_record = record_of({{"/tmp/tmpB/other.cu", "absent"}});
  const auto other =
      jitcache::proto::nvrtc_program_relative_key(input, *record_relative_to_program(input.include_record, input.name));
  CHECK(other->fields != key_a->fields);
}

TEST_CASE("program name use: records that differ only in absent paths (CuPy's directories) share the facts") {
  NoMemo off;
  Disk disk;
  const std::string header = disk.add("a.cuh", "#define VALUE 1\n");
  const std::string source = "#include <a.cuh>\n__global__ void k(int* p) { *p = VALUE; }\n";
  const std::string files = disk.record;
  disk.record = record_of({{"/tmp/tmp_a1/0f3c.cubin.cu", "absent"}}) + files;
  CHECK_FALSE(may_name(source, disk));
  write_file(header, "#define VALUE __FILE__\n");  // read again, it would no longer have its digest
  disk.record = record_of({{"/tmp/tmp_b2/0f3c.cubin.cu", "absent"}}) + files;
  CHECK_FALSE(may_name(source, disk));  // the facts of the same contents, remembered
}
