// Living in someone else's process (docs/transparent.md "Never worse than without it"): with
// libjitcache-preload.so loaded, programs that are no CUDA programs, other interposers and plugin
// hosts see what they see without it. Each program of tests/programs runs without the library,
// with it (before and after another interposer, also under `jitcache run`), and with
// JITCACHE_DISABLE=1, and its output must be the same every time.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <tests/support/child_process.hpp>
#include <tests/support/daemon_process.hpp>
#include <tests/support/daemon_stats.hpp>
#include <tests/support/sample_cubin.hpp>
#include <tests/support/temp_dir.hpp>

using jitcache::testing::ChildResult;
using jitcache::testing::DaemonProcess;
using jitcache::testing::EnvChange;
using jitcache::testing::run_child;
using jitcache::testing::stat_value;
using jitcache::testing::TempDir;

namespace {

const std::string k_preload = JITCACHE_PRELOAD_LIBRARY;
const std::string k_programs = JITCACHE_NEIGHBOUR_PROGRAMS_DIR;
const std::string k_interposer = k_programs + "/libneighbour_interposer.so";

std::string program(const char* name) { return k_programs + "/" + name; }

// The environment of one run: LD_PRELOAD as given (nullopt: none), the daemon's socket, the fake
// driver for the client, and JITCACHE_DISABLE when `disabled`.
std::vector<EnvChange> env_of(std::optional<std::string> preload, const std::string& socket, bool disabled) {
  return {
      {"LD_PRELOAD", std::move(preload)},
      {"JITCACHE_SOCKET", socket},
      {"JITCACHE_CUDA_DRIVER", std::string(JITCACHE_FAKE_CUDA_DRIVER)},
      {"JITCACHE_QUIET", std::string("1")},
      {"JITCACHE_DISABLE", disabled ? std::optional<std::string>("1") : std::nullopt},
  };
}

ChildResult run(const std::vector<std::string>& argv, const std::vector<EnvChange>& env) {
  return run_child(argv, env, std::chrono::seconds(60));
}

// Runs `argv` with the interposer alone, then with the preload library after it and before it,
// each also with JITCACHE_DISABLE=1, and under `jitcache run` (which puts the library first):
// every output must be the plain one.
void check_beside_interposer(const std::vector<std::string>& argv, const std::string& socket,
                             const std::string& expected) {
  const ChildResult plain = run(argv, env_of(k_interposer, socket, false));
  INFO(plain.output);
  REQUIRE(plain.status == 0);
  REQUIRE_THAT(plain.output, Catch::Contains(expected));
  for (const bool disabled : {false, true}) {
    for (const std::string& order : {k_preload + ":" + k_interposer, k_interposer + ":" + k_preload}) {
      const ChildResult preloaded = run(argv, env_of(order, socket, disabled));
      INFO("LD_PRELOAD=" << order << (disabled ? " JITCACHE_DISABLE=1" : ""));
      CHECK(preloaded.status == 0);
      CHECK(preloaded.output == plain.output);
    }
    std::vector<std::string> wrapped = {JITCACHE_CLI_PATH, "run", "--"};
    wrapped.insert(wrapped.end(), argv.begin(), argv.end());
    const ChildResult under_run = run(wrapped, env_of(k_interposer, socket, disabled));
    INFO("jitcache run" << (disabled ? " JITCACHE_DISABLE=1" : ""));
    CHECK(under_run.status == 0);
    CHECK(under_run.output == plain.output);
  }
}

std::vector<std::string> needed_libraries(const std::string& path) {
  const ChildResult dynamic = run({"/usr/bin/readelf", "-d", path}, {});
  REQUIRE(dynamic.status == 0);
  std::vector<std::string> needed;
  std::istringstream lines(dynamic.output);
  for (std::string line; std::getline(lines, line);) {
    const auto open = line.find("(NEEDED)");
    if (open == std::string::npos) continue;
    const auto start = line.find('[');
    const auto end = line.find(']');
    if (start != std::string::npos && end != std::string::npos)
      needed.push_back(line.substr(start + 1, end - start - 1));
  }
  return needed;
}

}  // namespace

TEST_CASE("transparent: the preloaded library depends on libc alone, and its core lies beside it") {
  CHECK(needed_libraries(k_preload) == std::vector<std::string>{"libc.so.6"});
  const auto core = std::filesystem::path(k_preload).parent_path() / "libjitcache-preload-core.so";
  CHECK(std::filesystem::is_regular_file(core));
}

TEST_CASE("transparent: a process that never loads CUDA finds none of its functions and never maps the core") {
  TempDir dir;
  const std::vector<std::string> argv = {program("symbol_probe")};
  const ChildResult plain = run(argv, env_of(std::nullopt, dir.file("none.sock"), false));
  INFO(plain.output);
  REQUIRE(plain.status == 0);
  REQUIRE_THAT(plain.output, Catch::Contains("cuModuleLoadData: default missing (error), program missing (error)"));
  REQUIRE_THAT(plain.output, !Catch::Contains(" found"));
  for (const bool disabled : {false, true}) {
    const ChildResult preloaded = run(argv, env_of(k_preload, dir.file("none.sock"), disabled));
    INFO((disabled ? "JITCACHE_DISABLE=1\n" : "") << preloaded.output);
    CHECK(preloaded.status == 0);
    CHECK(preloaded.output == plain.output);
    CHECK_THAT(preloaded.output, Catch::Contains("libstdc++ mapped: no\npreload core mapped: no"));
  }
}

TEST_CASE("transparent: another interposer of dlsym sees all 5 of the program's lookups, before or after ours") {
  TempDir dir;
  check_beside_interposer({program("neighbour_calls"), "dlsym"}, dir.file("none.sock"),
                          "interposer saw dlsym 5 of 5, cuModuleLoadData 0 of 5");
}

TEST_CASE(
    "transparent: another interposer of cuModuleLoadData sees all 5 of the program's loads, before or after ours") {
  TempDir dir;
  const std::string cubin = dir.file("sm90.cubin");
  const auto bytes = jitcache::testing::make_cubin({}, 11, 4096);
  std::ofstream(cubin, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  DaemonProcess daemon(dir);
  daemon.start();
  check_beside_interposer({program("neighbour_calls"), "load", cubin}, daemon.socket_path(),
                          "interposer saw dlsym 0 of 5, cuModuleLoadData 5 of 5");
}

TEST_CASE("transparent: a plugin found with dlsym(RTLD_DEFAULT) unloads at dlclose and reloads as its new build") {
  TempDir dir;
  const std::vector<std::string> argv = {program("plugin_reload"), k_programs + "/libreload_host.so",
                                         k_programs + "/libreload_plugin_v1.so", k_programs + "/libreload_plugin_v2.so",
                                         dir.path()};
  const ChildResult plain = run(argv, env_of(std::nullopt, dir.file("none.sock"), false));
  INFO(plain.output);
  REQUIRE(plain.status == 0);
  REQUIRE_THAT(plain.output, Catch::Contains("plugin unloaded: yes\nafter reload: version 2"));
  // The failed lookup is reported as the host's, as glibc words it without an interposer.
  REQUIRE_THAT(plain.output, Catch::Contains("libreload_host.so: undefined symbol: reload_no_such_symbol"));
  for (const bool disabled : {false, true}) {
    const ChildResult preloaded = run(argv, env_of(k_preload, dir.file("none.sock"), disabled));
    INFO((disabled ? "JITCACHE_DISABLE=1\n" : "") << preloaded.output);
    CHECK(preloaded.status == 0);
    CHECK(preloaded.output == plain.output);
    CHECK_THAT(preloaded.output, !Catch::Contains("jitcache"));
  }
}
