// What libjitcache decides once per process, each checked in this executable's own process (the
// driver is opened once, the warning printed once): entry points the driver lacks are named with
// the API version that introduced them and the versions of both sides, a load that needs them falls
// back to the driver, and a daemon that cannot be reached is reported once on stderr, not per load.
#include <catch2/catch.hpp>

#include <jitcache/jitcache.h>

#include <fcntl.h>
#include <unistd.h>

#include <fstream>
#include <iterator>
#include <string>

#include <tests/support/daemon_process.hpp>
#include <tests/support/fake_driver.hpp>
#include <tests/support/temp_dir.hpp>

using jitcache::testing::DaemonProcess;
using jitcache::testing::FakeDriver;
using jitcache::testing::TempDir;

namespace {

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

}  // namespace

TEST_CASE(
    "driver process: a driver without cuLink* is named, versions compared, and loads still work, no warning into a file put on stderr") {
  // Before libjitcache opens the driver: an older driver that lacks cuLinkCreate.
  FakeDriver fake;
  fake.set_hidden("cuLinkCreate");
  REQUIRE(fake.set_device(90, 12080) == 0);

  int driver_api = -1;
  int built_against = -1;
  CHECK(jitcache_driver_version(&driver_api, &built_against) == 1);
  CHECK(driver_api == 12080);
  CHECK(built_against == CUDA_VERSION);

  // PTX this older driver can JIT (the corpus PTX says 9.0; a 12.8 driver takes up to 8.7).
  std::string ptx = read_text(std::string(JITCACHE_TEST_DATA_DIR) + "/small_kernel.ptx");
  ptx.replace(ptx.find(".version 9.0"), 12, ".version 8.7");

  TempDir dir;
  {
    // A miss needs cuLink: the load falls back to the driver and says which entry point was missing.
    DaemonProcess daemon(dir);
    daemon.start();
    jitcache_config config{};
    config.struct_size = sizeof(config);
    config.socket_path = daemon.socket_path().c_str();
    config.quiet = 1;
    REQUIRE(jitcache_configure(&config) == 0);
    CUmodule module = nullptr;
    CHECK(jitcache_module_load_data(&module, ptx.c_str()) == CUDA_SUCCESS);
    if (module != nullptr) jitcache_module_unload(module);
    jitcache_load_info info{};
    info.struct_size = sizeof(info);
    REQUIRE(jitcache_last_load_info(&info) == 0);
    INFO(info.reason);
    CHECK(info.outcome == JITCACHE_OUTCOME_UNCACHED_FALLBACK);
    CHECK_THAT(std::string(info.reason), Catch::Contains("cuLinkCreate (CUDA 6.5 API, asked as version 6050)"));
    CHECK_THAT(std::string(info.reason),
               Catch::Contains("driver API 12080, libjitcache built against " + std::to_string(CUDA_VERSION)));
  }

  jitcache_config config{};
  config.struct_size = sizeof(config);
  config.socket_path = "/nonexistent/jitcache-test.sock";
  REQUIRE(jitcache_configure(&config) == 0);

  // Capture what reaches a file put on fd 2 around three loads with no daemon: nothing.
  const std::string captured = dir.file("stderr.txt");
  fflush(stderr);
  const int saved = ::dup(STDERR_FILENO);
  const int file = ::open(captured.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  REQUIRE(file >= 0);
  ::dup2(file, STDERR_FILENO);
  for (int i = 0; i < 3; ++i) {
    CUmodule module = nullptr;
    CHECK(jitcache_module_load_data(&module, ptx.c_str()) == CUDA_SUCCESS);
    if (module != nullptr) jitcache_module_unload(module);
  }
  fflush(stderr);
  ::dup2(saved, STDERR_FILENO);
  ::close(saved);
  ::close(file);
  const std::string warnings = read_text(captured);
  INFO(warnings);
  // fd 2 is another file now than the stderr the process started with: the warning is not written
  // into it (docs/client-guide.md "Streams"; tests/integration/test_hostile_programs.cpp checks the
  // one line on the stderr a program keeps).
  CHECK(warnings.empty());
}
