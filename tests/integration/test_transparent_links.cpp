// Transparent mode for link sessions (docs/transparent.md "Link sessions"): the unmodified link
// programs (tests/programs/link_*.c) run under libjitcache-preload.so against the real daemon — (d)
// a cuLink* session of two PTX inputs, one calling an extern .func of the other (fake driver), and
// (f) an nvJitLink link of the same two (the toolkit's real libnvJitLink). The second run of each is
// a hit in the daemon's counters and prints exactly what the first printed, the linked image's
// fingerprint included, and its JITCACHE_REPORT names the Complete it called with outcome hit; with
// the daemon down, hung or answering garbage, and with JITCACHE_DISABLE=1, each still prints the same.
#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <tests/support/child_process.hpp>
#include <tests/support/daemon_process.hpp>
#include <tests/support/daemon_stats.hpp>
#include <tests/support/temp_dir.hpp>

using jitcache::testing::ChildResult;
using jitcache::testing::DaemonProcess;
using jitcache::testing::EnvChange;
using jitcache::testing::run_child;
using jitcache::testing::stat_value;
using jitcache::testing::TempDir;

namespace {

const std::string k_caller = std::string(JITCACHE_TEST_DATA_DIR) + "/link/link_caller.ptx";
const std::string k_callee = std::string(JITCACHE_TEST_DATA_DIR) + "/link/link_callee.ptx";

std::vector<EnvChange> run_env(const std::string& socket, bool preload, std::vector<EnvChange> extra = {}) {
  std::vector<EnvChange> env = {
      {"JITCACHE_CUDA_DRIVER", std::string(JITCACHE_FAKE_CUDA_DRIVER)},
      {"JITCACHE_SOCKET", socket},
      {"JITCACHE_QUIET", std::string("1")},
      {"JITCACHE_DISABLE", std::nullopt},
      {"LD_PRELOAD", preload ? std::optional<std::string>(JITCACHE_PRELOAD_LIBRARY) : std::nullopt},
  };
  env.insert(env.end(), extra.begin(), extra.end());
  return env;
}

ChildResult run_program(const std::vector<std::string>& args, const std::vector<EnvChange>& env) {
  std::vector<std::string> argv = {std::string(JITCACHE_LINK_PROGRAMS_DIR) + "/" + args.front()};
  argv.insert(argv.end(), args.begin() + 1, args.end());
  return run_child(argv, env, std::chrono::seconds(60));
}

// Answers every connection with bytes that are no reply.
class GarbageDaemon {
 public:
  explicit GarbageDaemon(const std::string& path) : m_listener(::socket(AF_UNIX, SOCK_STREAM, 0)) {
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strncpy(addr.sun_path, path.c_str(), sizeof(addr.sun_path) - 1);
    REQUIRE(::bind(m_listener, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0);
    REQUIRE(::listen(m_listener, 16) == 0);
    m_thread = std::thread([this] {
      while (true) {
        const int peer = ::accept(m_listener, nullptr, nullptr);
        if (peer < 0) break;
        const char junk[] = "\xff\xff\xff\xff not a reply";
        [[maybe_unused]] auto n = ::write(peer, junk, sizeof(junk));
        ::close(peer);
      }
    });
  }
  ~GarbageDaemon() {
    ::shutdown(m_listener, SHUT_RDWR);
    ::close(m_listener);
    m_thread.join();
  }

 private:
  int m_listener;
  std::thread m_thread;
};

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// `entry_point` is the Complete the second run's JITCACHE_REPORT must name with outcome "hit".
void check_link(const std::vector<std::string>& args, const std::string& expect_in_output,
                const std::string& entry_point) {
  TempDir dir;
  const ChildResult plain = run_program(args, run_env(dir.file("none.sock"), false));
  INFO(plain.output);
  REQUIRE(plain.status == 0);
  REQUIRE_THAT(plain.output, Catch::Contains(expect_in_output));
  REQUIRE_THAT(plain.output, Catch::Contains("fingerprint"));

  DaemonProcess daemon(dir);
  daemon.start();
  auto client = daemon.client();
  const ChildResult cold = run_program(args, run_env(daemon.socket_path(), true));
  CHECK(cold.status == 0);
  CHECK(cold.output == plain.output);
  const auto hits_after_cold = stat_value(client, "hits");
  const auto entries_after_cold = stat_value(client, "entries");
  CHECK(entries_after_cold >= 1);

  const std::string report = dir.file("report.json");
  const ChildResult warm = run_program(args, run_env(daemon.socket_path(), true, {{"JITCACHE_REPORT", report}}));
  CHECK(warm.status == 0);
  CHECK(warm.output == plain.output);
  CHECK(stat_value(client, "hits") > hits_after_cold);
  CHECK_THAT(read_file(report), Catch::Contains("{\"entry_point\": \"" + entry_point + "\", \"outcome\": \"hit\""));
  CHECK(stat_value(client, "entries") == entries_after_cold);

  SECTION("JITCACHE_DISABLE=1 is pure pass-through") {
    const auto hits = stat_value(client, "hits");
    const auto lookups = stat_value(client, "fast_key_lookups");
    const ChildResult disabled =
        run_program(args, run_env(daemon.socket_path(), true, {{"JITCACHE_DISABLE", std::string("1")}}));
    CHECK(disabled.status == 0);
    CHECK(disabled.output == plain.output);
    CHECK(stat_value(client, "hits") == hits);
    CHECK(stat_value(client, "fast_key_lookups") == lookups);
  }
  SECTION("a hung daemon (SIGSTOP) costs a bounded wait, not the program") {
    REQUIRE(::kill(daemon.pid(), SIGSTOP) == 0);
    const ChildResult hung = run_program(args, run_env(daemon.socket_path(), true));
    ::kill(daemon.pid(), SIGCONT);
    CHECK(hung.status == 0);
    CHECK(hung.output == plain.output);
  }
  SECTION("a stopped daemon changes nothing the program sees") {
    daemon.stop();
    const ChildResult down = run_program(args, run_env(daemon.socket_path(), true));
    CHECK(down.status == 0);
    CHECK(down.output == plain.output);
  }
  SECTION("a daemon answering garbage changes nothing the program sees") {
    const std::string garbage_socket = dir.file("garbage.sock");
    GarbageDaemon garbage_daemon(garbage_socket);
    const ChildResult garbage = run_program(args, run_env(garbage_socket, true));
    CHECK(garbage.status == 0);
    CHECK(garbage.output == plain.output);
  }
}

}  // namespace

TEST_CASE("transparent links: (d) a cuLink* session of two PTX inputs, direct binding, is a hit the second time") {
  check_link({"link_culink", k_caller, k_callee, "apply_scale", "direct"}, "apply_scale: 0", "cuLinkComplete");
}

TEST_CASE("transparent links: (d) cuLink* reached through cuGetProcAddress_v2 is cached") {
  check_link({"link_culink", k_caller, k_callee, "apply_scale", "proc"}, "apply_scale: 0", "cuLinkComplete");
}

TEST_CASE("transparent links: (d) a cuLink* input added by cuLinkAddFile is cached") {
  check_link({"link_culink", k_caller, k_callee, "apply_scale", "file"}, "cuLinkAddFile callee: 0", "cuLinkComplete");
}

TEST_CASE("transparent links: (f) an nvJitLink link of two PTX inputs (versioned names) is a hit the second time") {
  check_link({"link_nvjitlink", k_caller, k_callee, "sm_90", "data"}, "nvJitLinkComplete: 0",
             "__nvJitLinkComplete_13_0");
}

TEST_CASE("transparent links: (f) an nvJitLink input added by nvJitLinkAddFile is cached") {
  check_link({"link_nvjitlink", k_caller, k_callee, "sm_90", "file"}, "nvJitLinkAddFile callee: 0",
             "__nvJitLinkComplete_13_0");
}

TEST_CASE("transparent links: (f) nvJitLink's unversioned names through dlopen + dlsym are cached") {
  check_link({"link_nvjitlink", k_caller, k_callee, "sm_80", "dlsym"}, "nvJitLinkComplete: 0", "nvJitLinkComplete");
}
