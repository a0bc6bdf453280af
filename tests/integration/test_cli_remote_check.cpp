// `jitcache remote check` and `jitcache remote status` as a user runs them: the real CLI against a
// real jitcached whose remote is a real redis-server on a loopback port of its own
// (tests/support/redis_server.hpp), checked by exit code, output and what is left in Redis: a
// healthy builder (exit 0), a dead Redis (exit 7, "cannot connect"), a read-only ACL user
// ("writable: no"), a daemon without remotes, and an untrusted caller's probe (forbidden); and an
// HTTP remote on a real nginx (tests/support/nginx_server.hpp), which cannot hold leases.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include <tests/support/child_process.hpp>
#include <tests/support/daemon_process.hpp>
#include <tests/support/fleet_hosts.hpp>
#include <tests/support/nginx_server.hpp>
#include <tests/support/redis_server.hpp>
#include <tests/support/temp_dir.hpp>
#include <tests/support/test_skip.hpp>

namespace {

// What Redis holds besides the builders value a signing daemon keeps there (docs/remote-layout.md
// "Builders"): the probe must leave nothing of its own.
std::string keys_but_builders(jitcache::testing::RedisServer& redis) {
  std::string left;
  std::istringstream keys(redis.cli({"--scan", "--pattern", "*"}));
  for (std::string key; std::getline(keys, key);) {
    if (!key.empty() && key != "jitcache:fleet:{builders}") left += key + "\n";
  }
  return left;
}

using namespace jitcache;
using namespace jitcache::testing;
using Json = nlohmann::json;

constexpr int k_exit_remote_failed = 7;  // client/cli/exit_codes.hpp ExitCode::remote_failed

ChildResult run_cli(const std::vector<std::string>& args, const DaemonProcess& daemon) {
  std::vector<std::string> argv{cli_executable()};
  argv.insert(argv.end(), args.begin(), args.end());
  ChildResult run = run_child_captured(argv, {{"JITCACHE_SOCKET", daemon.socket_path()}}, std::chrono::seconds(30));
  INFO("jitcache " << args.front() << " ...: exit " << run.status << "\nstdout: " << run.output
                   << "\nstderr: " << run.errors);
  REQUIRE(run.status >= 0);  // it finished within the timeout
  return run;
}

Json parse(const ChildResult& run) {
  INFO("stdout: " << run.output << "\nstderr: " << run.errors);
  Json json;
  REQUIRE_NOTHROW(json = Json::parse(run.output));
  return json;
}

// The one-line error of a failed command (docs/cli.md "Exit codes").
void check_one_line(const ChildResult& run) {
  INFO("stderr: " << run.errors);
  CHECK(run.errors.rfind("jitcache: ", 0) == 0);
  CHECK(run.errors.find('\n') == run.errors.size() - 1);
}

}  // namespace

TEST_CASE("cli remote check: a builder's reachable, writable Redis is exit 0, and the probe leaves nothing in it") {
  RedisServer redis;
  FleetKeys keys;
  FleetHost host = start_fleet_host(redis.url() + "/0", keys, /*builder=*/true);

  const ChildResult check = run_cli({"remote", "check"}, *host.daemon);
  CHECK(check.status == 0);
  CHECK(check.errors.empty());
  CHECK_THAT(check.output, Catch::Contains(redis.url() + "/0") && Catch::Contains("self-test ok"));

  const Json json = parse(run_cli({"remote", "check", "--json"}, *host.daemon));
  CHECK(json.at("probed") == true);
  CHECK(json.at("ok") == true);
  CHECK(json.at("signer").get<std::string>().size() == 16);
  CHECK(json.at("signing_self_test") == "ok");
  CHECK(json.at("trusted_keys") == Json::array({json.at("signer")}));
  REQUIRE(json.at("remotes").size() == 1);
  const Json& remote = json.at("remotes")[0];
  CHECK(remote.at("name") == redis.url() + "/0");
  CHECK(remote.at("breaker") == "closed");
  CHECK(remote.at("reachable") == "yes");
  CHECK(remote.at("writable") == "yes");
  CHECK(remote.at("leases") == "supported");
  CHECK(remote.at("latency_us").get<std::uint64_t>() > 0);
  CHECK(remote.at("message") == "");
  // Written, read back and removed: nothing of the probes is left.
  CHECK(keys_but_builders(redis).empty());

  const ChildResult status = run_cli({"--json", "remote", "status"}, *host.daemon);
  CHECK(status.status == 0);
  const Json known = parse(status);
  CHECK(known.at("probed") == false);
  CHECK(known.at("remotes")[0].at("reachable") == "not_probed");
  CHECK(known.at("remotes")[0].at("latency_us") == 0);
}

TEST_CASE("cli remote check: with the Redis server killed it is exit 7, and the message says it cannot connect") {
  RedisServer redis;
  FleetKeys keys;
  FleetHost host = start_fleet_host(redis.url() + "/0", keys, /*builder=*/true);
  redis.kill();

  const ChildResult check = run_cli({"remote", "check"}, *host.daemon);
  CHECK(check.status == k_exit_remote_failed);
  check_one_line(check);
  CHECK_THAT(check.errors,
             Catch::Contains("remote 0") && Catch::Contains("not reachable") && Catch::Contains("cannot connect"));
  CHECK_THAT(check.output, Catch::Contains("not_probed"));  // the table is printed all the same

  const ChildResult json_run = run_cli({"remote", "check", "--json"}, *host.daemon);
  CHECK(json_run.status == k_exit_remote_failed);
  const Json json = parse(json_run);
  CHECK(json.at("ok") == false);
  const Json& remote = json.at("remotes")[0];
  CHECK(remote.at("reachable") == "no");
  CHECK(remote.at("writable") == "not_probed");
  CHECK_THAT(remote.at("message").get<std::string>(), Catch::StartsWith("ping: ") && Catch::Contains("cannot connect"));
}

TEST_CASE("cli remote check: a read-only ACL user is reachable but not writable, exit 7") {
  RedisServerOptions options;
  options.acl_users = {"reader on >reader-pw ~* +@read +ping +auth"};
  RedisServer redis(options);
  FleetKeys keys;
  const std::string password_file = keys.dir.file("remote-password");
  write_file(password_file, "reader-pw\n");
  REQUIRE(::chmod(password_file.c_str(), 0600) == 0);
  const std::string url = "redis://reader@" + redis.address() + "/0";
  FleetHost host = start_fleet_host(url, keys, /*builder=*/true, {"--remote-password-file", password_file});

  const ChildResult check = run_cli({"--json", "remote", "check"}, *host.daemon);
  CHECK(check.status == k_exit_remote_failed);
  CHECK_THAT(check.errors, Catch::Contains("not writable"));
  const Json json = parse(check);
  const Json& remote = json.at("remotes")[0];
  CHECK(remote.at("name") == url);  // the URL without its password
  CHECK(remote.at("reachable") == "yes");
  CHECK(remote.at("writable") == "no");
  CHECK_THAT(remote.at("message").get<std::string>(),
             Catch::StartsWith("write: ") && Catch::Contains("read-only user or ACL"));
  CHECK(json.at("ok") == false);

  // A consumer (no signing key) with the same user only reads: it passes.
  FleetHost consumer = start_fleet_host(url, keys, /*builder=*/false, {"--remote-password-file", password_file});
  const ChildResult reads = run_cli({"--json", "remote", "check"}, *consumer.daemon);
  CHECK(reads.status == 0);
  const Json consumer_json = parse(reads);
  CHECK(consumer_json.at("signer") == nullptr);
  CHECK(consumer_json.at("remotes")[0].at("writable") == "not_probed");
}

TEST_CASE("cli remote check: nginx is writable but holds no lease, and its read-only location is not writable") {
  if (nginx_executable().empty()) {
    JITCACHE_SKIP("no nginx installed (scripts/install-deps installs it)");
  }
  NginxOptions options;
  options.read_only_location = "/ro/";
  NginxServer nginx(options);
  FleetKeys keys;
  FleetHost host = start_fleet_host(nginx.url() + "," + nginx.url("/ro"), keys, /*builder=*/true);

  const ChildResult check = run_cli({"--json", "remote", "check"}, *host.daemon);
  CHECK(check.status == k_exit_remote_failed);
  CHECK_THAT(check.errors, Catch::Contains("remote 1") && Catch::Contains("not writable"));
  const Json json = parse(check);
  REQUIRE(json.at("remotes").size() == 2);
  const Json& writable = json.at("remotes")[0];
  CHECK(writable.at("reachable") == "yes");
  CHECK(writable.at("writable") == "yes");
  CHECK(writable.at("leases") == "unsupported");
  CHECK(writable.at("message") == "");
  const Json& read_only = json.at("remotes")[1];
  CHECK(read_only.at("reachable") == "yes");
  CHECK(read_only.at("writable") == "no");
  CHECK_THAT(read_only.at("message").get<std::string>(), Catch::StartsWith("write: "));
}

TEST_CASE("cli remote check: without remotes status says so and is exit 0, and check is exit 7") {
  TempDir state;
  DaemonProcess daemon(state);
  daemon.start();

  const ChildResult status = run_cli({"remote", "status"}, daemon);
  CHECK(status.status == 0);
  CHECK(status.output == "no remote configured\n");

  const ChildResult check = run_cli({"remote", "check"}, daemon);
  CHECK(check.status == k_exit_remote_failed);
  CHECK(check.output.empty());
  check_one_line(check);
  CHECK_THAT(check.errors, Catch::Contains("no remote configured"));
}

TEST_CASE("cli remote check: an untrusted caller may see the status but its probe is refused") {
  if (::geteuid() != 0) {
    JITCACHE_SKIP("a caller of another uid needs root to setuid to one");
  }
  RedisServer redis;
  FleetKeys keys;
  FleetHost host = start_fleet_host(redis.url() + "/0", keys, /*builder=*/true);
  // Let an unprivileged uid reach the socket (the test's temp dirs are 0700).
  REQUIRE(::chmod(host.state->path().c_str(), 0755) == 0);
  REQUIRE(::chmod(host.daemon->socket_path().c_str(), 0666) == 0);

  // The CLI as uid 65534 (nobody): its stderr comes back through a pipe, its exit status as is.
  auto run_as_nobody = [&](const std::vector<std::string>& args) {
    int pipe_fds[2];
    REQUIRE(::pipe2(pipe_fds, O_CLOEXEC) == 0);
    std::vector<std::string> argv_strings{cli_executable()};
    argv_strings.insert(argv_strings.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& a : argv_strings) argv.push_back(a.data());
    argv.push_back(nullptr);
    const pid_t child = ::fork();
    REQUIRE(child >= 0);
    if (child == 0) {
      ::dup2(pipe_fds[1], 1);
      ::dup2(pipe_fds[1], 2);
      if (::setgid(65534) != 0 || ::setuid(65534) != 0) ::_exit(120);
      ::setenv("JITCACHE_SOCKET", host.daemon->socket_path().c_str(), 1);
      ::execv(argv[0], argv.data());
      ::_exit(121);
    }
    ::close(pipe_fds[1]);
    std::string output;
    char buffer[4096];
    for (ssize_t n; (n = ::read(pipe_fds[0], buffer, sizeof buffer)) > 0;) output.append(buffer, std::size_t(n));
    ::close(pipe_fds[0]);
    int status = 0;
    REQUIRE(::waitpid(child, &status, 0) == child);
    REQUIRE(WIFEXITED(status));
    return std::pair<int, std::string>(WEXITSTATUS(status), output);
  };

  const auto [status_code, status_output] = run_as_nobody({"remote", "status"});
  INFO(status_output);
  CHECK(status_code == 0);
  CHECK_THAT(status_output, Catch::Contains(redis.url()));

  const auto [check_code, check_output] = run_as_nobody({"remote", "check"});
  INFO(check_output);
  CHECK(check_code == 4);  // the daemon refused: ExitCode::daemon_failed
  CHECK_THAT(check_output, Catch::Contains("forbidden") && Catch::Contains("refused the probe"));
  CHECK(keys_but_builders(redis).empty());
}
