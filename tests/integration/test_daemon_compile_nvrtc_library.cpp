// The NVRTC the administrator configures for the daemon's own NVRTC compiles (compile_nvrtc_library,
// docs/compile-service.md "NVRTC"): the real jitcache-compile worker opens the toolkit's real NVRTC
// and reports the identity a client computes for the same library (proto/nvrtc_library_identity.hpp);
// a library that is not NVRTC, a missing one and a relative path are refused with a sentence saying
// why; and the real daemon with each serves on, its STATS saying what became of the library.
#include <catch2/catch.hpp>

#include <dlfcn.h>

#include <string>
#include <vector>

#include <daemon/compile/compile_runner.hpp>
#include <proto/nvrtc_library_identity.hpp>

#include <tests/support/daemon_process.hpp>
#include <tests/support/daemon_stats.hpp>
#include <tests/support/temp_dir.hpp>

namespace {

using jitcache::daemon::compile::CompileLimits;
using jitcache::daemon::compile::CompileRunner;
using jitcache::daemon::compile::parse_nvrtc_identity_line;
using jitcache::testing::DaemonOptions;
using jitcache::testing::DaemonProcess;
using jitcache::testing::stat_value;
using jitcache::testing::TempDir;

CompileRunner runner() { return CompileRunner(JITCACHE_COMPILE_WORKER_PATH, CompileLimits{}); }

// The identity a program's process computes for the NVRTC it opened (client/src/nvrtc/nvrtc_identity.cpp
// calls the same function with digests it remembers across processes).
jitcache::proto::NvrtcIdentity identity_in_this_process() {
  void* handle = ::dlopen(JITCACHE_NVRTC_LIBRARY, RTLD_NOW | RTLD_LOCAL);
  REQUIRE(handle != nullptr);
  auto* version = reinterpret_cast<int (*)(int*, int*)>(::dlsym(handle, "nvrtcVersion"));
  auto identity = jitcache::proto::nvrtc_library_identity(::dlsym(handle, "nvrtcCompileProgram"), version,
                                                          jitcache::proto::mapped_file_xxh3);
  REQUIRE(identity);
  return *identity;
}

// A library every process has that is not NVRTC: the C library.
std::string c_library() {
  Dl_info info{};
  REQUIRE(::dladdr(reinterpret_cast<const void*>(&::dladdr), &info) != 0);
  return info.dli_fname;
}

}  // namespace

TEST_CASE("nvrtc library: the worker reports the identity a client computes for the same NVRTC") {
  CompileRunner probe = runner();
  auto reported = probe.probe_nvrtc(JITCACHE_NVRTC_LIBRARY);
  REQUIRE(reported);
  const auto expected = identity_in_this_process();
  CHECK(reported->major == expected.major);
  CHECK(reported->minor == expected.minor);
  CHECK(reported->library == expected.library);
  CHECK(reported->builtins == expected.builtins);
  CHECK(reported->library != reported->builtins);
}

TEST_CASE("nvrtc library: a library that is not NVRTC, a missing one and a relative path are refused, saying why") {
  CompileRunner probe = runner();
  auto not_nvrtc = probe.probe_nvrtc(c_library());
  REQUIRE_FALSE(not_nvrtc);
  CHECK_THAT(not_nvrtc.error().message, Catch::Contains("is not an NVRTC library: it has no nvrtcVersion"));
  auto missing = probe.probe_nvrtc("/nonexistent/libnvrtc.so.13");
  REQUIRE_FALSE(missing);
  CHECK_THAT(missing.error().message, Catch::Contains("cannot be loaded"));
  auto relative = probe.probe_nvrtc("libnvrtc.so");
  REQUIRE_FALSE(relative);
  CHECK_THAT(relative.error().message, Catch::Contains("is not an absolute path"));
}

TEST_CASE("nvrtc library: the worker's identity line reads back only when whole") {
  const std::string hex(32, 'a');
  auto read = parse_nvrtc_identity_line("NVRTC 13.0 " + hex + " " + std::string(32, '0'));
  REQUIRE(read);
  CHECK(read->major == 13);
  CHECK(read->minor == 0);
  CHECK(read->library.bytes[0] == 0xaa);
  CHECK(read->builtins.bytes[15] == 0);
  const std::vector<std::string> bad_lines{"NVRTC 13.0 " + hex,
                                           "NVRTC 13.0 " + hex + " " + hex + " ",
                                           "nvJitLink 13.0",
                                           "NVRTC 13 " + hex + " " + hex,
                                           "NVRTC 13.0 " + hex + " " + std::string(31, 'a') + "g",
                                           "NVRTC 0.0 " + hex + " " + hex,
                                           "NVRTC 13.0 " + hex + " " + std::string(31, 'a')};
  for (const std::string& bad : bad_lines) {
    CAPTURE(bad);
    CHECK_FALSE(parse_nvrtc_identity_line(bad));
  }
}

TEST_CASE(
    "nvrtc library: the daemon configured with NVRTC reports its version, and with a library that is not "
    "NVRTC it logs why and serves on, its compile worker ready") {
  const auto expected = identity_in_this_process();
  {
    TempDir state;
    DaemonOptions options;
    options.extra_args = {"--compile-nvrtc-library", JITCACHE_NVRTC_LIBRARY};
    DaemonProcess daemon(state, options);
    daemon.start();
    auto client = daemon.client();
    CHECK(stat_value(client, "compile_nvrtc_version") ==
          static_cast<std::uint64_t>(1000 * expected.major + 10 * expected.minor));
    CHECK(stat_value(client, "compile_nvrtc_probe_failed") == 0);
    CHECK(daemon.stop() == 0);
  }
  {
    TempDir state;
    DaemonOptions options;
    options.extra_args = {"--compile-nvrtc-library", c_library()};
    DaemonProcess daemon(state, options);
    daemon.start();
    auto client = daemon.client();
    CHECK(stat_value(client, "compile_nvrtc_probe_failed") == 1);
    CHECK(stat_value(client, "compile_nvrtc_version") == 0);
    CHECK(stat_value(client, "compile_worker_ready") == 1);
    REQUIRE(client.ping());
    CHECK(daemon.stop() == 0);
    const std::string log = jitcache::testing::read_file(daemon.log_path());
    CHECK_THAT(log, Catch::Contains("compile_nvrtc_library " + c_library() + " is not used"));
    CHECK_THAT(log, Catch::Contains("is not an NVRTC library"));
  }
  {
    // Unset: today's daemon, no probe.
    TempDir state;
    DaemonProcess daemon(state);
    daemon.start();
    auto client = daemon.client();
    CHECK(stat_value(client, "compile_nvrtc_version") == 0);
    CHECK(stat_value(client, "compile_nvrtc_probe_failed") == 0);
  }
}
