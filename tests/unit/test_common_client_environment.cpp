// The client's environment table (common/client_environment.hpp): the flag rule every part applies,
// docs/configuration.md "Client environment", generated from the table, and a set-group-ID process,
// which reads none of it.
#include <catch2/catch.hpp>

#include <sys/auxv.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include <common/client_environment.hpp>
#include <tests/support/child_process.hpp>
#include <tests/support/temp_dir.hpp>
#include <tests/support/test_skip.hpp>

using jitcache::common::client_env;
using jitcache::common::client_env_flag;
using jitcache::common::client_environment_markdown;
using jitcache::common::flag_value;

TEST_CASE("client environment: docs/configuration.md lists exactly the table") {
  std::ifstream in(std::string(JITCACHE_SOURCE_DIR) + "/docs/configuration.md");
  const std::string doc((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  REQUIRE_FALSE(doc.empty());
  CHECK_THAT(doc, Catch::Contains(client_environment_markdown()));
}

TEST_CASE("client environment: a flag is off for 0, false, no, off and empty, on for anything else") {
  for (const char* off : {"0", "false", "FALSE", "No", "off", "OFF"}) {
    INFO(off);
    CHECK_FALSE(flag_value(off, true));
  }
  for (const char* on : {"1", "true", "Yes", "ON", "maybe", "2"}) {
    INFO(on);
    CHECK(flag_value(on, false));
  }
  CHECK_FALSE(flag_value("", false));
  CHECK(flag_value("", true));
  CHECK(flag_value(nullptr, true));
  CHECK_FALSE(flag_value(nullptr, false));
}

// Run only by the test below, as a set-group-ID copy of this program.
TEST_CASE("client environment: the secure child's view", "[.secure-child]") {
  if (::getauxval(AT_SECURE) == 0) std::_Exit(77);  // the copy did not run set-group-ID (a nosuid mount)
  CHECK_FALSE(client_env("JITCACHE_CUDA_DRIVER"));
  CHECK_FALSE(client_env("JITCACHE_SOCKET"));
  CHECK_FALSE(client_env_flag("JITCACHE_QUIET", false));
}

TEST_CASE("client environment: a set-group-ID process reads no JITCACHE_* variable (a library to load, a socket)") {
  if (::geteuid() != 0) JITCACHE_SKIP("making a set-group-ID copy of this test needs root");
  jitcache::testing::TempDir dir;
  const std::string probe = dir.file("probe");
  std::filesystem::copy_file("/proc/self/exe", probe);
  REQUIRE(::chown(probe.c_str(), 0, 65534) == 0);
  REQUIRE(::chmod(probe.c_str(), 02755) == 0);
  REQUIRE(::chmod(dir.path().c_str(), 0755) == 0);
  const auto child = jitcache::testing::run_child({probe, "[.secure-child]"},
                                                  {{"JITCACHE_CUDA_DRIVER", dir.file("evil.so")},
                                                   {"JITCACHE_SOCKET", dir.file("evil.sock")},
                                                   {"JITCACHE_QUIET", std::string("1")}},
                                                  std::chrono::seconds(60));
  if (child.status == 77) JITCACHE_SKIP(dir.path() + " is on a file system that ignores the set-group-ID bit");
  INFO(child.output);
  CHECK(child.status == 0);
}
