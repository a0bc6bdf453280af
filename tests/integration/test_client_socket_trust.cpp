// A planted socket (docs/security.md "Whom the client trusts"), with real uids: without
// XDG_RUNTIME_DIR and /run/user/<uid> (cron, su, batch jobs) the user daemon's socket is
// /tmp/jitcache-<uid>/jitcached.sock, a directory anyone may create first. Here an attacker uid
// creates it for a victim uid, runs a real jitcached there holding entries for the victim's keys and
// publishing them beside the socket; the victim's `jitcache ping` and `get` and libjitcache's loads
// (through the fake driver) must not send the attacker's daemon a byte (its connections_total does
// not move) nor take a byte from it or from its published directory, while it runs and after it
// died. JITCACHE_DAEMON_USER naming that uid, as a sidecar's application does, lets it serve.
// Needs root to create the users (CI runs as root); skips visibly otherwise.
#include <catch2/catch.hpp>

#include <jitcache/jitcache.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <common/default_paths.hpp>
#include <proto/digest.hpp>
#include <proto/key.hpp>
#include <proto/published_image.hpp>

#include <tests/support/child_process.hpp>
#include <tests/support/daemon_process.hpp>
#include <tests/support/eventually.hpp>
#include <tests/support/load_flow_fixture.hpp>
#include <tests/support/sample_entries.hpp>
#include <tests/support/system_users.hpp>
#include <tests/support/test_skip.hpp>

using namespace jitcache;
using namespace jitcache::testing::load_flow;
using client::transport::DaemonClient;
using client::transport::DaemonTrust;
using testing::SystemUser;
using testing::SystemUsers;
using testing::TempDir;
namespace fs = std::filesystem;

namespace {

using jitcache::testing::eventually;

constexpr std::uint64_t k_put_seed = 77;

// Removes what the test made outside its temp dirs, whatever happens.
struct RemovedAtEnd {
  ~RemovedAtEnd() {
    std::error_code ignored;
    fs::remove_all(path, ignored);
  }
  std::string path;
};

// The attacker's daemon, killed at the end if still running.
struct ChildProcess {
  ~ChildProcess() { stop(); }
  void stop() {
    if (pid <= 0) return;
    ::kill(pid, SIGKILL);
    testing::wait_child(pid);
    pid = -1;
  }
  pid_t pid = -1;
};

std::vector<std::string> published_files(const std::string& dir) {
  std::vector<std::string> names;
  std::error_code missing;
  for (const auto& entry : fs::directory_iterator(dir, missing)) {
    if (!entry.path().filename().string().starts_with(".")) names.push_back(entry.path().filename());
  }
  return names;
}

// The environment of a victim's process: nothing names a socket, a runtime dir or a daemon user.
void clear_victim_environment(bool published) {
  for (const char* name : {"XDG_RUNTIME_DIR", "JITCACHE_SOCKET", "JITCACHE_DAEMON_USER", "XDG_CONFIG_HOME"}) {
    ::unsetenv(name);
  }
  ::setenv("HOME", "/nonexistent", 1);
  ::setenv("JITCACHE_CONFIG", "/dev/null", 1);  // no /etc/jitcache/jitcached.toml either
  ::setenv("JITCACHE_QUIET", "1", 1);
  if (!published) ::setenv("JITCACHE_PUBLISHED", "0", 1);
}

// In the victim's forked child (no Catch2 there): libjitcache with the default socket loads the small
// kernel without the cache, for want of a daemon it may trust, and reads no published copy.
int victim_load(bool published, const std::string& planted_dir, uid_t attacker) {
  clear_victim_environment(published);
  int failures = 0;
  auto fail = [&](const std::string& what) {
    std::fprintf(stderr, "victim load (published %d): %s\n", published ? 1 : 0, what.c_str());
    ++failures;
  };
  if (jitcache_configure(nullptr) != 0) return 50;
  CUmodule module = nullptr;
  const CUresult result = jitcache_module_load_data_ex(&module, small_ptx().c_str(), 0, nullptr, nullptr);
  jitcache_load_info info{};
  info.struct_size = sizeof(info);
  jitcache_last_load_info(&info);
  jitcache_counters counts{};
  counts.struct_size = sizeof(counts);
  jitcache_get_counters(&counts);
  const std::string reason = info.reason;
  if (result != CUDA_SUCCESS) fail("the load failed: " + std::to_string(result));
  if (info.outcome != JITCACHE_OUTCOME_UNCACHED_FALLBACK) {
    fail(std::string("outcome ") + jitcache_outcome_name(info.outcome) + ": " + reason);
  }
  if (counts.published_hits != 0 || counts.hits != 0) fail("a hit: " + reason);
  if (counts.daemon_unavailable != 1) fail("daemon_unavailable is " + std::to_string(counts.daemon_unavailable));
  const std::string owner = planted_dir + " is owned by uid " + std::to_string(attacker);
  if (reason.find("is not trusted") == std::string::npos || reason.find(owner) == std::string::npos) {
    fail("the reason does not name the untrusted owner: " + reason);
  }
  if (module != nullptr) jitcache_module_unload(module);
  return failures;
}

}  // namespace

TEST_CASE(
    "socket trust: a daemon another uid runs at /tmp/jitcache-<uid> gets no byte from the CLI or libjitcache, nor serves one") {
  SystemUsers users("jcs");
  if (const std::string why = testing::why_cannot_setpriv_as(users); !why.empty()) {
    JITCACHE_SKIP(why);
  }
  const SystemUser& victim = users.a();
  const SystemUser& attacker = users.b();
  if (fs::exists("/run/user/" + std::to_string(victim.uid)) || fs::exists(common::k_system_socket_path)) {
    JITCACHE_SKIP("/run/user/" << victim.uid << " or " << common::k_system_socket_path
                               << " exists here, so the victim's default socket is not the /tmp fallback");
  }
  const std::string planted_dir = "/tmp/jitcache-" + std::to_string(victim.uid);
  const std::string planted = planted_dir + "/jitcached.sock";
  REQUIRE_FALSE(fs::exists(planted_dir));
  RemovedAtEnd remove_planted{planted_dir};

  // Copies the other uids can run: the build tree may lie where they cannot reach.
  TempDir bin("jitcache-trust-bin");
  ::chmod(bin.path().c_str(), 0755);
  const std::string daemon_copy = bin.file("jitcached");
  const std::string cli_copy = bin.file("jitcache");
  fs::copy_file(testing::daemon_executable(), daemon_copy);
  // The full CLI (client/cli), not the front: a lone copy of the front would look for it beside itself.
  fs::copy_file(JITCACHE_FULL_CLI_PATH, cli_copy);
  ::chmod(daemon_copy.c_str(), 0755);
  ::chmod(cli_copy.c_str(), 0755);
  TempDir attacker_home("jitcache-trust-attacker");
  REQUIRE(::chown(attacker_home.path().c_str(), attacker.uid, attacker.gid) == 0);
  TempDir victim_home("jitcache-trust-victim");
  REQUIRE(::chown(victim_home.path().c_str(), victim.uid, victim.gid) == 0);
  (void)small_ptx();  // read here: the victim's children may not reach the source tree
  fake().clear_failures();
  fake().set_device(90, 13000);

  // The attacker makes the victim's directory first and runs its own daemon in it, reachable by the
  // victim (the group they share), publishing what it stores.
  ChildProcess daemon;
  daemon.pid = testing::start_as_user(attacker, {users.group()}, [&] {
    if (::mkdir(planted_dir.c_str(), 0755) != 0) return 93;
    const int log = ::open(attacker_home.file("jitcached.log").c_str(), O_WRONLY | O_CREAT | O_APPEND, 0600);
    if (log >= 0) {
      ::dup2(log, 1);
      ::dup2(log, 2);
    }
    ::setenv("JITCACHE_COMPILE", "false", 1);
    ::setenv("JITCACHE_PUBLISH", "true", 1);
    const std::string state = attacker_home.file("store");
    const std::string group = users.group_name();
    ::execl(daemon_copy.c_str(), daemon_copy.c_str(), "--foreground", "--socket", planted.c_str(), "--state-dir",
            state.c_str(), "--socket-group", group.c_str(), "--log-level", "warn", static_cast<char*>(nullptr));
    return 94;
  });
  // The test's own view of the attacker's daemon trusts the attacker's uid explicitly.
  client::transport::ConnectOptions probe_options;
  probe_options.socket_path = planted;
  probe_options.trust = DaemonTrust::with_daemon_users(std::to_string(attacker.uid));
  std::optional<DaemonClient> probe;
  REQUIRE(eventually([&] {
    auto connected = DaemonClient::connect(probe_options);
    if (!connected || !connected->ping()) return false;
    probe.emplace(std::move(*connected));
    return true;
  }));

  // The attacker's entries: bytes of its own under a key id the victim asks for, and the victim's
  // kernel stored (compiled by the fake driver) and published beside the socket.
  const auto attacker_image = testing::sample_image(k_put_seed, 4096);
  REQUIRE(probe->put(testing::sample_put(k_put_seed, attacker_image)));
  const std::string key_prefix = proto::to_hex(proto::key_id(testing::sample_key(k_put_seed))).substr(0, 16);
  ::setenv("JITCACHE_DAEMON_USER", std::to_string(attacker.uid).c_str(), 1);
  use_socket(planted);
  ::unsetenv("JITCACHE_DAEMON_USER");
  REQUIRE(load_expecting(small_ptx().c_str(), CUDA_SUCCESS) == JITCACHE_OUTCOME_COMPILED_LOCALLY);
  const std::string published_dir = proto::published_dir_for(planted);
  // Both are published: the attacker's own PUT (it carries content_fast, as every PUT must) and the
  // victim's kernel.
  REQUIRE(eventually([&] { return published_files(published_dir).size() == 2; }));
  use_socket(victim_home.file("nothing.sock"));  // this process lets go of the attacker's daemon

  const std::uint64_t connections_before = testing::stat_value(*probe, "connections_total");
  const std::vector<std::string> as_victim{
      "/usr/bin/setpriv",         "--reuid",  std::to_string(victim.uid),    "--regid",
      std::to_string(victim.gid), "--groups", std::to_string(users.group()), "--"};
  auto victim_cli = [&](std::vector<std::string> args, std::vector<testing::EnvChange> env = {}) {
    std::vector<std::string> argv = as_victim;
    // stderr into the output the test reads: that is where the CLI says why.
    argv.insert(argv.end(), {"/bin/sh", "-c", "exec \"$0\" \"$@\" 2>&1", cli_copy});
    argv.insert(argv.end(), args.begin(), args.end());
    for (const char* name : {"XDG_RUNTIME_DIR", "JITCACHE_SOCKET", "JITCACHE_DAEMON_USER"}) {
      bool set = false;
      for (const auto& change : env) set = set || change.name == name;
      if (!set) env.push_back({name, std::nullopt});
    }
    env.push_back({"HOME", "/nonexistent"});
    return testing::run_child(argv, env, std::chrono::seconds(30));
  };
  const std::string owner = planted_dir + " is owned by uid " + std::to_string(attacker.uid);

  SECTION("while the attacker's daemon runs, and after it died leaving its socket and published files") {
    auto ping = victim_cli({"ping"});
    INFO(ping.output);
    CHECK(ping.status == 3);
    CHECK_THAT(ping.output, Catch::Contains("the socket " + planted + " is not trusted"));
    CHECK_THAT(ping.output, Catch::Contains(owner));

    const std::string out = victim_home.file("kernel.cubin");
    auto got = victim_cli({"get", key_prefix, "-o", out});
    INFO(got.output);
    CHECK(got.status == 3);
    CHECK_FALSE(fs::exists(out));

    CHECK(testing::as_user(victim, {users.group()}, [&] { return victim_load(true, planted_dir, attacker.uid); }) == 0);
    CHECK(testing::as_user(victim, {users.group()}, [&] { return victim_load(false, planted_dir, attacker.uid); }) ==
          0);
    // Not a connection, so not a byte.
    CHECK(testing::stat_value(*probe, "connections_total") == connections_before);

    probe.reset();
    daemon.stop();
    REQUIRE(fs::exists(planted));
    REQUIRE(published_files(published_dir).size() == 2);
    CHECK(testing::as_user(victim, {users.group()}, [&] { return victim_load(true, planted_dir, attacker.uid); }) == 0);
  }

  SECTION("unless JITCACHE_DAEMON_USER names the daemon's user, as a sidecar's application does") {
    for (const std::string& named : {attacker.name, std::to_string(attacker.uid)}) {
      auto ping = victim_cli({"ping"}, {{"JITCACHE_DAEMON_USER", named}});
      INFO(named << ": " << ping.output);
      CHECK(ping.status == 0);
      const std::string out = victim_home.file("kernel-" + named + ".cubin");
      auto got = victim_cli({"get", key_prefix, "-o", out}, {{"JITCACHE_DAEMON_USER", named}});
      INFO(got.output);
      CHECK(got.status == 0);
      CHECK(testing::read_file(out) == std::string(attacker_image.begin(), attacker_image.end()));
    }
    CHECK(testing::stat_value(*probe, "connections_total") > connections_before);
  }
}
