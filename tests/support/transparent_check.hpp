// What the transparent mode's integration tests check for every unmodified program
// (test_transparent_routes.cpp, test_transparent_links.cpp): run without jitcache, then twice under
// libjitcache-preload.so against the real daemon — the second run a hit in the daemon's counters and
// in its JITCACHE_REPORT, the output the same every time — and with the daemon disabled, hung
// (SIGSTOP), stopped, or replaced by a peer answering garbage, still the same output.
// Header-only because it asserts with Catch2. The including test target defines
// JITCACHE_PRELOAD_LIBRARY and links jitcache_fake_cuda_paths (JITCACHE_FAKE_CUDA_DRIVER).
// Thread safety: test code; one test at a time.
#pragma once

#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <tests/support/child_process.hpp>
#include <tests/support/daemon_process.hpp>
#include <tests/support/daemon_stats.hpp>
#include <tests/support/temp_dir.hpp>

namespace jitcache::testing::transparent {

// The environment of a run: the fake driver for the client, the daemon's socket, and the preload
// library unless `preload` is false (the program as it runs without jitcache).
inline std::vector<EnvChange> run_env(const std::string& socket, bool preload, std::vector<EnvChange> extra = {}) {
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

// Answers every connection with bytes that are no reply, until destroyed.
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
        const char junk[] = "\xff\xff\xff\xff garbage, not a reply";
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
  GarbageDaemon(const GarbageDaemon&) = delete;
  GarbageDaemon& operator=(const GarbageDaemon&) = delete;

 private:
  int m_listener;
  std::thread m_thread;
};

inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// Runs the program with the environment given (run_env's); what the program is stays the caller's.
using Runner = std::function<ChildResult(const std::vector<EnvChange>& env)>;

// The whole check. `expect_in_output` must be in what the program prints without jitcache;
// `entry_point` is the call the second run's JITCACHE_REPORT must name with outcome "hit".
inline void check_twice(const Runner& run, const std::string& expect_in_output, const std::string& entry_point) {
  TempDir dir;
  const ChildResult plain = run(run_env(dir.file("none.sock"), false));
  REQUIRE(plain.status == 0);
  INFO(plain.output);
  REQUIRE_THAT(plain.output, Catch::Contains(expect_in_output));

  DaemonProcess daemon(dir);
  daemon.start();
  auto client = daemon.client();
  const ChildResult cold = run(run_env(daemon.socket_path(), true));
  CHECK(cold.status == 0);
  CHECK(cold.output == plain.output);
  const auto hits_after_cold = stat_value(client, "hits");
  const auto entries_after_cold = stat_value(client, "entries");
  CHECK(entries_after_cold >= 1);

  const ChildResult warm = run(run_env(daemon.socket_path(), true, {{"JITCACHE_REPORT", dir.file("report-%p.json")}}));
  CHECK(warm.status == 0);
  CHECK(warm.output == plain.output);
  CHECK(stat_value(client, "hits") > hits_after_cold);
  CHECK(stat_value(client, "entries") == entries_after_cold);
  // Every process that loaded wrote its report (a forked child its own, by its pid).
  std::string reports;
  for (const auto& file : std::filesystem::directory_iterator(dir.path())) {
    if (file.path().filename().string().rfind("report-", 0) == 0) reports += read_file(file.path().string());
  }
  CHECK_THAT(reports, Catch::Contains("{\"entry_point\": \"" + entry_point + "\", \"outcome\": \"hit\""));

  SECTION("JITCACHE_DISABLE=1 is pure pass-through") {
    const auto hits = stat_value(client, "hits");
    const auto lookups = stat_value(client, "fast_key_lookups");
    const ChildResult disabled = run(run_env(daemon.socket_path(), true, {{"JITCACHE_DISABLE", std::string("1")}}));
    CHECK(disabled.status == 0);
    CHECK(disabled.output == plain.output);
    CHECK(stat_value(client, "hits") == hits);
    CHECK(stat_value(client, "fast_key_lookups") == lookups);
  }
  SECTION("a hung daemon (SIGSTOP) costs a bounded wait, not the program") {
    REQUIRE(::kill(daemon.pid(), SIGSTOP) == 0);
    const ChildResult hung = run(run_env(daemon.socket_path(), true));
    ::kill(daemon.pid(), SIGCONT);
    CHECK(hung.status == 0);
    CHECK(hung.output == plain.output);
  }
  SECTION("a stopped daemon changes nothing the program sees") {
    daemon.stop();
    const ChildResult down = run(run_env(daemon.socket_path(), true));
    CHECK(down.status == 0);
    CHECK(down.output == plain.output);
  }
  SECTION("a daemon answering garbage changes nothing the program sees") {
    const std::string garbage_socket = dir.file("garbage.sock");
    GarbageDaemon garbage(garbage_socket);
    const ChildResult answered = run(run_env(garbage_socket, true));
    CHECK(answered.status == 0);
    CHECK(answered.output == plain.output);
  }
}

}  // namespace jitcache::testing::transparent
