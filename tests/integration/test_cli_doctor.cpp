// `jitcache doctor` as a user runs it: the real CLI against a real jitcached on set-ups that work
// and on set-ups broken the ways operators break them — a socket others may write, a socket another uid
// owns (planted), a daemon whose compile worker does not exist, a store on a nearly full disk (a
// small tmpfs, tests/support/tmpfs_mount.hpp), no daemon behind the socket, no socket at all. Each
// checks the finding (its severity, what it says and the fix), the exit status (0, 8 for a warning,
// 9 for an error: client/cli/exit_codes.hpp) and that --json parses. The host's driver is the fake
// one (tests/fakes/fake_cuda) through JITCACHE_CUDA_DRIVER, or none.
#include <catch2/catch.hpp>

#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include <client/src/transport/daemon_client.hpp>

#include <tests/support/child_process.hpp>
#include <tests/support/daemon_process.hpp>
#include <tests/support/temp_dir.hpp>
#include <tests/support/test_skip.hpp>
#include <tests/support/tmpfs_mount.hpp>

namespace {

using namespace jitcache;
using namespace jitcache::testing;
using Json = nlohmann::json;

constexpr int k_exit_warning = 8;  // client/cli/exit_codes.hpp ExitCode::doctor_warning
constexpr int k_exit_error = 9;    // ExitCode::doctor_error

// Rationale: a limit the disk under the temp dir has room for, so the healthy set-up's disk check
// is ok wherever the test runs.
const std::vector<std::string> k_small_store{"--max-size", "32MiB"};

DaemonOptions daemon_options(std::vector<std::string> args, std::vector<std::pair<std::string, std::string>> env = {}) {
  DaemonOptions options;
  options.extra_args = std::move(args);
  options.extra_env = std::move(env);
  return options;
}

struct Doctor {
  ChildResult run;
  Json json;

  // The finding of one check; fails the test when there is none.
  const Json& finding(const std::string& check) const {
    for (const Json& f : json.at("findings")) {
      if (f.at("check") == check) return f;
    }
    FAIL("no finding of check " << check << " in " << json.dump(2));
    return json;
  }
  bool has(const std::string& check) const {
    for (const Json& f : json.at("findings")) {
      if (f.at("check") == check) return true;
    }
    return false;
  }
  std::string severity(const std::string& check) const { return finding(check).at("severity"); }
  std::string message(const std::string& check) const { return finding(check).at("message"); }
  std::string fix(const std::string& check) const {
    const Json& fix = finding(check).at("fix");
    return fix.is_null() ? std::string() : fix.get<std::string>();
  }
};

// A program's environment on this host, with the socket and driver the test chooses and nothing
// else that would change the answer (a config file, a disabled cache, a preload).
std::vector<EnvChange> environment(const std::string& socket, const std::string& driver) {
  return {{"JITCACHE_SOCKET", socket},
          {"JITCACHE_CUDA_DRIVER", driver},
          {"JITCACHE_CONFIG", "/dev/null"},
          {"JITCACHE_DISABLE", std::nullopt},
          {"JITCACHE_DAEMON_USER", std::nullopt},
          {"JITCACHE_PRELOAD_LIBRARY", std::nullopt},
          {"LD_PRELOAD", std::nullopt}};
}

// Runs `jitcache doctor --json` and then `jitcache doctor` (text) in the same environment; both
// must end with the same status.
Doctor run_doctor(const std::vector<EnvChange>& env) {
  Doctor doctor;
  doctor.run = run_child_captured({cli_executable(), "doctor", "--json"}, env, std::chrono::seconds(30));
  INFO("doctor --json: exit " << doctor.run.status << "\nstdout: " << doctor.run.output
                              << "\nstderr: " << doctor.run.errors);
  REQUIRE(doctor.run.status >= 0);
  REQUIRE_NOTHROW(doctor.json = Json::parse(doctor.run.output));
  CHECK(doctor.json.at("exit_status") == doctor.run.status);
  const ChildResult text = run_child_captured({cli_executable(), "doctor"}, env, std::chrono::seconds(30));
  INFO("doctor: stdout: " << text.output);
  CHECK(text.status == doctor.run.status);
  // One line per finding, each fix on a line of its own underneath, and the count.
  for (const Json& finding : doctor.json.at("findings")) {
    CHECK_THAT(text.output, Catch::Contains(finding.at("check").get<std::string>()));
    if (!finding.at("fix").is_null()) CHECK_THAT(text.output, Catch::Contains("fix: "));
  }
  CHECK_THAT(text.output, Catch::Contains("doctor: "));
  return doctor;
}

std::uint64_t stat_of(const DaemonProcess& daemon, const std::string& name) {
  auto stats = daemon.client().stats();
  REQUIRE(stats);
  for (const auto& [figure, value] : stats->values) {
    if (figure == name) return value;
  }
  FAIL("no STATS figure " << name);
  return 0;
}

}  // namespace

TEST_CASE("cli doctor: a healthy set-up is all ok, and without a driver the driver alone is a warning") {
  TempDir dir("jitcache-doctor-healthy");
  DaemonProcess daemon(dir, daemon_options(k_small_store));
  daemon.start();

  const Doctor healthy = run_doctor(environment(daemon.socket_path(), JITCACHE_FAKE_CUDA_DRIVER));
  INFO(healthy.json.dump(2));
  CHECK(healthy.run.status == 0);
  CHECK(healthy.json.at("worst") == "ok");
  for (const char* check : {"socket", "socket_trust", "daemon", "library", "driver", "compile_worker", "published",
                            "disk_space", "remote", "preload"}) {
    INFO(check);
    CHECK(healthy.severity(check) == "ok");
    CHECK(healthy.fix(check).empty());
  }
  CHECK_THAT(healthy.message("socket"), Catch::Contains(daemon.socket_path()) && Catch::Contains("JITCACHE_SOCKET") &&
                                            Catch::Contains("mode 0660"));
  CHECK_THAT(healthy.message("daemon"), Catch::Contains("compile"));
  CHECK_THAT(healthy.message("compile_worker"), Catch::Contains("nvJitLink 13."));
  CHECK(healthy.finding("published").at("details").at("readable") == true);
  CHECK_THAT(healthy.message("remote"), Catch::Contains("no remote configured"));
  CHECK(healthy.finding("preload").at("details").at("in_effect") == false);
  CHECK(healthy.finding("disk_space").at("details").at("max_size") == 32u << 20);

  // Without a driver: a finding that says so, a warning, and nothing else changes.
  const Doctor no_driver = run_doctor(environment(daemon.socket_path(), dir.file("no/libcuda.so.1")));
  CHECK(no_driver.run.status == k_exit_warning);
  CHECK(no_driver.severity("driver") == "warning");
  CHECK_THAT(no_driver.message("driver"), Catch::StartsWith("no CUDA driver"));
  CHECK_THAT(no_driver.fix("driver"), Catch::Contains("JITCACHE_CUDA_DRIVER"));
  CHECK(no_driver.severity("compile_worker") == "ok");
  CHECK_THAT(no_driver.message("compile_worker"), Catch::Contains("there is none here"));

  // A driver older than the worker's nvJitLink major: its cubins would not load here.
  std::vector<EnvChange> old_driver = environment(daemon.socket_path(), JITCACHE_FAKE_CUDA_DRIVER);
  old_driver.push_back({"FAKE_CUDA_DRIVER_VERSION", "12080"});
  const Doctor older = run_doctor(old_driver);
  CHECK(older.run.status == k_exit_error);
  CHECK(older.severity("compile_worker") == "error");
  CHECK_THAT(older.message("compile_worker"), Catch::Contains("newer than this host's driver (12.8)"));
  CHECK_THAT(older.fix("compile_worker"), Catch::Contains("upgrade the NVIDIA driver"));
}

TEST_CASE("cli doctor: a socket everyone may write is a warning, one another uid owns an error, and it gets no byte") {
  if (::geteuid() != 0) {
    JITCACHE_SKIP("changing the socket's owner needs root");
  }
  TempDir dir("jitcache-doctor-socket");
  DaemonProcess daemon(dir, daemon_options(k_small_store));
  daemon.start();
  const auto env = environment(daemon.socket_path(), JITCACHE_FAKE_CUDA_DRIVER);

  REQUIRE(::chmod(daemon.socket_path().c_str(), 0666) == 0);
  const Doctor open = run_doctor(env);
  CHECK(open.run.status == k_exit_warning);
  CHECK(open.severity("socket") == "warning");
  CHECK_THAT(open.message("socket"), Catch::Contains("mode 0666") && Catch::Contains("every user of this host"));
  CHECK_THAT(open.fix("socket"), Catch::Contains("0660"));
  CHECK(open.severity("socket_trust") == "ok");
  CHECK(open.severity("daemon") == "ok");

  // A uid nobody trusts owns the socket, as if it had planted it: the client refuses it, the
  // doctor says whose it is and what to do, and connects to nothing.
  uid_t stranger = 47011;
  while (::getpwuid(stranger) != nullptr) ++stranger;
  const std::uint64_t connections_before = stat_of(daemon, "connections_total");
  REQUIRE(::chmod(daemon.socket_path().c_str(), 0660) == 0);
  REQUIRE(::chown(daemon.socket_path().c_str(), stranger, static_cast<gid_t>(-1)) == 0);
  const Doctor planted = run_doctor(env);
  CHECK(planted.run.status == k_exit_error);
  CHECK(planted.severity("socket") == "ok");
  CHECK(planted.severity("socket_trust") == "error");
  CHECK_THAT(planted.message("socket_trust"),
             Catch::Contains("is not trusted") && Catch::Contains("uid " + std::to_string(stranger)));
  CHECK_THAT(planted.fix("socket_trust"), Catch::Contains("planted") && Catch::Contains("JITCACHE_DAEMON_USER"));
  CHECK_FALSE(planted.has("daemon"));  // not asked: nothing goes to a socket the client refuses
  CHECK_FALSE(planted.has("compile_worker"));
  REQUIRE(::chown(daemon.socket_path().c_str(), 0, static_cast<gid_t>(-1)) == 0);
  // The one connection since is this STATS's own.
  CHECK(stat_of(daemon, "connections_total") == connections_before + 1);
}

TEST_CASE("cli doctor: a daemon whose compile worker does not exist is an error that says where to look") {
  TempDir dir("jitcache-doctor-worker");
  std::vector<std::string> args = k_small_store;
  args.insert(args.end(), {"--compile-worker", dir.file("missing/jitcache-compile")});
  DaemonProcess daemon(dir, daemon_options(args));
  daemon.start();

  const Doctor doctor = run_doctor(environment(daemon.socket_path(), JITCACHE_FAKE_CUDA_DRIVER));
  CHECK(doctor.run.status == k_exit_error);
  CHECK(doctor.severity("compile_worker") == "error");
  CHECK_THAT(doctor.message("compile_worker"), Catch::Contains("failed its start-up probe"));
  CHECK_THAT(doctor.fix("compile_worker"), Catch::Contains("compile_worker") && Catch::Contains("log"));
  CHECK(doctor.finding("compile_worker").at("details").at("probe_failed") == true);
  // The rest of the set-up is as healthy as before.
  CHECK(doctor.severity("daemon") == "ok");
  CHECK(doctor.severity("disk_space") == "ok");
}

TEST_CASE("cli doctor: a store on a nearly full disk is an error, and max_size beyond the free space a warning") {
  {
    TempDir dir("jitcache-doctor-full");
    TmpfsMount mount{dir.file("store"), "16m"};
    if (!mount.mounted()) {
      JITCACHE_SKIP(mount.error());
    }
    DaemonProcess daemon(dir, daemon_options({"--max-size", "1GiB"}, {{"JITCACHE_COMPILE", "false"}}));
    daemon.start();
    const Doctor doctor = run_doctor(environment(daemon.socket_path(), JITCACHE_FAKE_CUDA_DRIVER));
    CHECK(doctor.run.status == k_exit_error);
    CHECK(doctor.severity("disk_space") == "error");
    CHECK_THAT(doctor.message("disk_space"), Catch::Contains("no_space") && Catch::Contains("of 16.0 MiB"));
    CHECK_THAT(doctor.fix("disk_space"), Catch::Contains("state_dir"));
    const Json& details = doctor.finding("disk_space").at("details");
    CHECK(details.at("filesystem_bytes") == 16u << 20);
    CHECK(details.at("free_bytes").get<std::uint64_t>() <= mount.free_bytes() + (1u << 20));
    // Compiling turned off is a choice, not a fault.
    CHECK(doctor.severity("compile_worker") == "ok");
    CHECK_THAT(doctor.message("compile_worker"), Catch::Contains("compile = false"));
  }
  TempDir dir("jitcache-doctor-small");
  TmpfsMount mount{dir.file("store"), "256m"};
  REQUIRE(mount.mounted());
  DaemonProcess daemon(dir, daemon_options({"--max-size", "1GiB"}));
  daemon.start();
  const Doctor doctor = run_doctor(environment(daemon.socket_path(), JITCACHE_FAKE_CUDA_DRIVER));
  CHECK(doctor.run.status == k_exit_warning);
  CHECK(doctor.severity("disk_space") == "warning");
  CHECK_THAT(doctor.message("disk_space"), Catch::Contains("the disk fills before eviction starts"));
  CHECK_THAT(doctor.fix("disk_space"), Catch::Contains("lower max_size to at most"));
}

TEST_CASE("cli doctor: a stale socket file with no daemon behind it, and a missing socket, are errors that say so") {
  TempDir dir("jitcache-doctor-down");
  DaemonProcess daemon(dir, daemon_options(k_small_store));
  daemon.start();
  daemon.kill_hard();  // leaves its socket file behind
  struct stat st {};
  REQUIRE(::lstat(daemon.socket_path().c_str(), &st) == 0);

  const Doctor stale = run_doctor(environment(daemon.socket_path(), JITCACHE_FAKE_CUDA_DRIVER));
  CHECK(stale.run.status == k_exit_error);
  CHECK(stale.severity("socket") == "ok");
  CHECK(stale.severity("daemon") == "error");
  CHECK_THAT(stale.message("daemon"), Catch::Contains("nothing listens on") && Catch::Contains("stale"));
  CHECK_THAT(stale.fix("daemon"), Catch::Contains("start jitcached"));
  CHECK_FALSE(stale.has("disk_space"));
  CHECK(stale.severity("driver") == "ok");  // what needs no daemon is still checked

  const Doctor missing = run_doctor(environment(dir.file("elsewhere.sock"), JITCACHE_FAKE_CUDA_DRIVER));
  CHECK(missing.run.status == k_exit_error);
  CHECK(missing.severity("socket") == "error");
  CHECK_THAT(missing.message("socket"), Catch::StartsWith("no socket at " + dir.file("elsewhere.sock")));
  CHECK_THAT(missing.fix("socket"), Catch::Contains("JITCACHE_SOCKET"));
  CHECK_FALSE(missing.has("daemon"));
}
