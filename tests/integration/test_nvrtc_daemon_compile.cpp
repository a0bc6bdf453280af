// NVRTC compiles run by the daemon (PROTOCOL.md §5 NVRTC_COMPILE, docs/compile-service.md "NVRTC"):
// the program (g) (tests/programs/nvrtc_compile.c) compiles under libjitcache-preload.so with the
// toolkit's real NVRTC against a daemon configured with the same library (compile_nvrtc_library).
// A compile that reads nothing from disk is compiled by the daemon's worker and shared, so another
// uid's process gets a hit with NVRTC's answers byte for byte; anything else stays the caller's.
// NVRTC needs no GPU.
#include <catch2/catch.hpp>

#include <dlfcn.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include <proto/nvrtc_compile_messages.hpp>
#include <proto/nvrtc_daemon_eligibility.hpp>
#include <proto/nvrtc_key.hpp>
#include <proto/nvrtc_library_identity.hpp>
#include <proto/nvrtc_result.hpp>
#include <proto/wire.hpp>
#include <tests/support/nvrtc_daemon.hpp>
#include <tests/support/test_skip.hpp>

using jitcache::testing::ChildResult;
using jitcache::testing::DaemonOptions;
using jitcache::testing::SystemUsers;
using jitcache::testing::TempDir;
using jitcache::testing::write_file;
using jitcache::testing::nvrtc::compile_args;
using jitcache::testing::nvrtc::NvrtcDaemon;
using jitcache::testing::nvrtc::Sources;
using jitcache::testing::nvrtc::with_daemon_nvrtc;
namespace proto = jitcache::proto;

namespace {

// Self-contained: it includes only the header (g) passes at create, so its compile reads nothing
// from disk and the daemon compiles it.
constexpr const char* k_contained_kernel =
    "#include \"memory_header.cuh\"\n"
    "template <typename T> __global__ void scale(T* x) { x[threadIdx.x] *= (T)MEMORY_VALUE; }\n";
constexpr const char* k_contained_broken_kernel =
    "#include \"memory_header.cuh\"\n"
    "template <typename T> __global__ void scale(T* x) { x[threadIdx.x] = undeclared_name; }\n";

// A kernel file in a directory of its own (readable by the test's other uids).
struct Kernel {
  TempDir dir;
  std::string path = dir.file("kernel.cu");
  explicit Kernel(const char* text) {
    write_file(path, text);
    ::chmod(dir.path().c_str(), 0755);
    ::chmod(path.c_str(), 0644);
  }
  std::vector<std::string> args() const { return {path, "scale<float>", "-arch=sm_90"}; }
};

// The children run in an empty directory every uid may search: the include record of a
// self-contained program names the working directory's paths, which must be absent there.
class InEmptyDirectory {
 public:
  InEmptyDirectory() : m_old(std::filesystem::current_path()) {
    ::chmod(m_dir.path().c_str(), 0755);
    std::filesystem::current_path(m_dir.path());
  }
  ~InEmptyDirectory() { std::filesystem::current_path(m_old); }
  InEmptyDirectory(const InEmptyDirectory&) = delete;
  InEmptyDirectory& operator=(const InEmptyDirectory&) = delete;

 private:
  TempDir m_dir{"jitcache-nvrtc-cwd"};
  std::filesystem::path m_old;
};

DaemonOptions shared_socket(const SystemUsers& users, DaemonOptions options = {}) {
  options.extra_args.push_back("--socket-group");
  options.extra_args.push_back(users.group_name());
  return options;
}

// The identity of the toolkit's NVRTC as a client computes it.
proto::NvrtcIdentity toolkit_identity() {
  void* handle = ::dlopen(JITCACHE_NVRTC_LIBRARY, RTLD_NOW | RTLD_LOCAL);
  REQUIRE(handle != nullptr);
  auto* version = reinterpret_cast<int (*)(int*, int*)>(::dlsym(handle, "nvrtcVersion"));
  auto identity =
      proto::nvrtc_library_identity(::dlsym(handle, "nvrtcCompileProgram"), version, proto::mapped_file_xxh3);
  REQUIRE(identity);
  return *identity;
}

// A request for `source` as a client would send it, its claimed key computed as a client does.
proto::NvrtcCompileRequest request_for(const std::string& source) {
  proto::NvrtcCompileRequest request;
  request.identity = toolkit_identity();
  request.program.name = "direct.cu";
  request.program.source = source;
  request.program.options = {"-arch=sm_90"};
  auto input = proto::nvrtc_compile_input_of(request.program, request.identity, request.include_record);
  REQUIRE(input);
  auto key = proto::nvrtc_key(*input);
  REQUIRE(key);
  request.claimed_key = key->fields;
  return request;
}

std::string log_of(const std::vector<std::uint8_t>& blob) {
  auto result = proto::decode_nvrtc_result(blob);
  REQUIRE(result);
  const auto& log = result->output(proto::NvrtcOutput::log).bytes;
  return std::string(log.begin(), log.end());
}

}  // namespace

TEST_CASE(
    "nvrtc daemon compile: (g) the daemon compiles one uid's program and another uid gets a hit, answering the same") {
  SystemUsers users("jcd");
  if (!users.available()) {
    JITCACHE_SKIP(users.why());
  }
  InEmptyDirectory cwd;
  NvrtcDaemon cache(with_daemon_nvrtc(shared_socket(users)), "jitcache-nvrtc-daemon");
  ::chmod(cache.state().path().c_str(), 0755);
  CHECK((cache.client().hello("test")->capabilities & proto::k_capability_nvrtc_compile) != 0);
  const Kernel kernel(k_contained_kernel);
  const ChildResult plain = cache.plain(kernel.args());
  REQUIRE(plain.status == 0);

  const ChildResult first = cache.cached_as(users, users.a(), kernel.args());
  CHECK(first.status == 0);
  CHECK(first.output == plain.output);  // outputs, lowered name, log and codes
  CHECK(cache.stat("compiles") == 1);
  CHECK(cache.stat("compile_stored") == 1);
  CHECK(cache.stat("nvrtc_puts") == 0);  // the daemon stored it, not the client
  CHECK(cache.stat("entries") == 1);

  const ChildResult second = cache.cached_as(users, users.b(), kernel.args());
  CHECK(second.status == 0);
  CHECK(second.output == plain.output);
  CHECK(cache.stat("nvrtc_hits") == 1);  // B found A's compile: the entry is shared
  CHECK(cache.stat("compiles") == 1);
  CHECK(cache.stat("entries") == 1);
}

TEST_CASE("nvrtc daemon compile: (g) a program with -I is compiled by the caller and stays in its uid's namespace") {
  SystemUsers users("jci");
  if (!users.available()) {
    JITCACHE_SKIP(users.why());
  }
  InEmptyDirectory cwd;
  NvrtcDaemon cache(with_daemon_nvrtc(shared_socket(users)), "jitcache-nvrtc-daemon");
  ::chmod(cache.state().path().c_str(), 0755);
  REQUIRE((cache.client().hello("test")->capabilities & proto::k_capability_nvrtc_compile) != 0);
  Sources sources;
  ::chmod(sources.dir.path().c_str(), 0755);
  const ChildResult plain = cache.plain(compile_args(sources));
  REQUIRE(plain.status == 0);

  CHECK(cache.cached_as(users, users.a(), compile_args(sources)).output == plain.output);
  CHECK(cache.stat("compiles") == 0);  // not eligible: the caller's NVRTC compiled it
  CHECK(cache.stat("nvrtc_puts") == 1);
  CHECK(cache.cached_as(users, users.b(), compile_args(sources)).output == plain.output);
  CHECK(cache.stat("nvrtc_hits") == 0);  // B did not see A's result
  CHECK(cache.stat("entries") == 2);
}

TEST_CASE("nvrtc daemon compile: (g) a compile error through the daemon answers NVRTC's code and log, every time") {
  InEmptyDirectory cwd;
  NvrtcDaemon cache(with_daemon_nvrtc());
  const Kernel kernel(k_contained_broken_kernel);
  const ChildResult plain = cache.plain(kernel.args());
  REQUIRE_THAT(plain.output, Catch::Contains("undeclared_name"));
  for (int run = 0; run < 2; ++run) {
    const ChildResult cached = cache.cached(kernel.args());
    CHECK(cached.status == plain.status);
    CHECK(cached.output == plain.output);
  }
  CHECK(cache.stat("compiles") == 1);
  CHECK(cache.stat("nvrtc_hits") == 1);
}

TEST_CASE("nvrtc daemon compile: (g) 8 processes compiling one program at once are one compile in the daemon") {
  InEmptyDirectory cwd;
  NvrtcDaemon cache(with_daemon_nvrtc());
  const Kernel kernel(k_contained_kernel);
  const ChildResult plain = cache.plain(kernel.args());
  REQUIRE(plain.status == 0);
  constexpr int k_processes = 8;
  std::vector<ChildResult> results(k_processes);
  std::vector<std::thread> threads;
  for (int i = 0; i < k_processes; ++i) {
    threads.emplace_back([&, i] { results[i] = cache.cached(kernel.args()); });
  }
  for (std::thread& thread : threads) thread.join();
  for (const ChildResult& result : results) CHECK(result.output == plain.output);
  CHECK(cache.stat("compiles") == 1);
  CHECK(cache.stat("nvrtc_puts") == 0);
  CHECK(cache.stat("entries") == 1);
}

TEST_CASE("nvrtc daemon compile: (g) without compile_nvrtc_library the program compiles itself, as before") {
  InEmptyDirectory cwd;
  const Kernel kernel(k_contained_kernel);
  NvrtcDaemon without;
  CHECK((without.client().hello("test")->capabilities & proto::k_capability_nvrtc_compile) == 0);
  const ChildResult plain = without.plain(kernel.args());
  CHECK(without.cached(kernel.args()).output == plain.output);
  CHECK(without.stat("compiles") == 0);
  CHECK(without.stat("nvrtc_puts") == 1);
  // The same program against a daemon with its NVRTC: the daemon's compile.
  NvrtcDaemon with(with_daemon_nvrtc());
  CHECK(with.cached(kernel.args()).output == plain.output);
  CHECK(with.stat("compiles") == 1);
  CHECK(with.stat("nvrtc_puts") == 0);
}

TEST_CASE("nvrtc daemon compile: a request whose claimed key is not its program's plants nothing under it") {
  NvrtcDaemon cache(with_daemon_nvrtc());
  auto client = cache.client();
  proto::NvrtcCompileRequest honest = request_for("extern \"C\" __global__ void k(int* p) { *p = 1; }\n");
  proto::NvrtcCompileRequest forged = request_for("extern \"C\" __global__ void k(int* p) { *p = 2; }\n");
  forged.claimed_key = honest.claimed_key;  // the program of 2, filed under the key of 1

  auto refused = client.nvrtc_compile(forged, std::chrono::seconds(60));
  REQUIRE_FALSE(refused);
  CHECK(refused.error().reply_status == static_cast<std::uint16_t>(proto::Status::bad_request));
  CHECK_THAT(refused.error().message, Catch::Contains("not the key of the program"));
  auto looked_up = client.lookup(honest.claimed_key);
  REQUIRE(looked_up);
  CHECK_FALSE(looked_up->has_value());
  CHECK(cache.stat("compiles") == 0);

  auto compiled = client.nvrtc_compile(honest, std::chrono::seconds(60));
  REQUIRE(compiled);
  CHECK(compiled->origin == proto::NvrtcCompileOrigin::compiled);
  auto stored = client.lookup(honest.claimed_key);
  REQUIRE(stored);
  REQUIRE(stored->has_value());
  const proto::Bytes bytes = (*stored)->bytes();
  CHECK(std::vector<std::uint8_t>(bytes.begin(), bytes.end()) == compiled->result);
}

TEST_CASE("nvrtc daemon compile: the daemon's compile reads nothing from disk, whatever the request claims") {
  NvrtcDaemon cache(with_daemon_nvrtc());
  auto client = cache.client();
  // The include record claims nothing is read; the source reads a file every process may read,
  // which the daemon's worker must not reach.
  proto::NvrtcCompileRequest request =
      request_for("#include \"/etc/passwd\"\nextern \"C\" __global__ void k(int* p) { *p = 1; }\n");
  auto compiled = client.nvrtc_compile(request, std::chrono::seconds(60));
  REQUIRE(compiled);
  const std::string log = log_of(compiled->result);
  CHECK_THAT(log, Catch::Contains("cannot open source file \"/etc/passwd\""));
  CHECK_THAT(log, !Catch::Contains("root:"));

  // Options that name the disk, and a record that says the compile reads it, are refused.
  proto::NvrtcCompileRequest with_include = request_for("extern \"C\" __global__ void k(int* p) { *p = 3; }\n");
  with_include.program.options.push_back("-I/etc");
  auto include_refused = client.nvrtc_compile(with_include, std::chrono::seconds(60));
  REQUIRE_FALSE(include_refused);
  CHECK(include_refused.error().reply_status == static_cast<std::uint16_t>(proto::Status::cannot_compile));
  CHECK_THAT(include_refused.error().message, Catch::Contains("include path"));
  for (const std::string& record : {std::string("/etc/passwd\0absent\n", 19), std::string("../x.h\0absent\n", 14),
                                    std::string("x.h\0file 00\n", 12)}) {
    proto::NvrtcCompileRequest reads = request_for("extern \"C\" __global__ void k(int* p) { *p = 4; }\n");
    reads.include_record = record;
    auto refused = client.nvrtc_compile(reads, std::chrono::seconds(60));
    REQUIRE_FALSE(refused);
    CHECK(refused.error().reply_status == static_cast<std::uint16_t>(proto::Status::cannot_compile));
  }
}
