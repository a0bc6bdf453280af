// The state directory's files under a running daemon (docs/operations.md "State
// directory"): deleting jitcache.db and its -wal/-shm is noticed, logged and counted, and what is
// written after it is in a new database that survives a restart, not in unlinked files; deleting
// jitcached.lock does not let a second daemon onto the same store.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <thread>

#include <tests/support/daemon_process.hpp>
#include <tests/support/sample_entries.hpp>
#include <tests/support/temp_dir.hpp>

using namespace jitcache;
using testing::DaemonProcess;
using testing::TempDir;

namespace {

void delete_database_files(const DaemonProcess& daemon) {
  const std::string db = daemon.state_dir() + "/jitcache.db";
  REQUIRE(::unlink(db.c_str()) == 0);
  for (const char* suffix : {"-wal", "-shm"}) ::unlink((db + suffix).c_str());
}

// A STATS value, or nullopt when the daemon has no such counter (checked without stopping the test).
std::optional<std::uint64_t> stat(client::transport::DaemonClient& client, const std::string& name) {
  auto stats = client.stats();
  REQUIRE(stats);
  for (const auto& [n, v] : stats->values) {
    if (n == name) return v;
  }
  return std::nullopt;
}

bool logged(const DaemonProcess& daemon, const std::string& text, std::chrono::seconds within) {
  const auto deadline = std::chrono::steady_clock::now() + within;
  while (testing::read_file(daemon.log_path()).find(text) == std::string::npos) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return true;
}

bool found(client::transport::DaemonClient& client, std::uint64_t seed) {
  auto hit = client.lookup(testing::sample_key(seed));
  REQUIRE(hit);
  return hit->has_value();
}

}  // namespace

TEST_CASE(
    "state dir: database files deleted under a running daemon are noticed within a flush interval, and PUTs after it survive a restart") {
  TempDir dir;
  DaemonProcess daemon(dir, {{"--usage-flush-interval", "100ms"}, {}, "warn"});
  daemon.start();
  {
    auto client = daemon.client();
    REQUIRE(client.put(testing::sample_put(1, testing::sample_image(1, 4000))));
    REQUIRE(found(client, 1));
  }
  delete_database_files(daemon);

  // The usage flush looks at the files every interval, with or without traffic.
  REQUIRE(logged(daemon, "jitcache.db was deleted", std::chrono::seconds(20)));
  CHECK_THAT(testing::read_file(daemon.log_path()), Catch::Contains("reopened on a new, empty database"));
  auto client = daemon.client();
  REQUIRE(client.put(testing::sample_put(2, testing::sample_image(2, 4000))));
  CHECK_FALSE(found(client, 1));  // went with the deleted file
  CHECK(found(client, 2));
  CHECK(stat(client, "store_reopens") == std::optional<std::uint64_t>(1));
  CHECK(stat(client, "store_resets") == std::optional<std::uint64_t>(0));
  REQUIRE(daemon.stop() == 0);

  daemon.start();
  auto after = daemon.client();
  CHECK(found(after, 2));
  CHECK(stat(after, "entries") == std::optional<std::uint64_t>(1));
}

TEST_CASE("state dir: the first PUT after the database files were deleted notices it and is kept") {
  TempDir dir;
  // No flush in the test's time: only the PUT can notice.
  DaemonProcess daemon(dir, {{"--usage-flush-interval", "1h"}, {}, "warn"});
  daemon.start();
  {
    auto client = daemon.client();
    REQUIRE(client.put(testing::sample_put(1, testing::sample_image(1, 4000))));
  }
  delete_database_files(daemon);
  std::optional<std::uint64_t> reopens;
  {
    auto client = daemon.client();
    REQUIRE(client.put(testing::sample_put(2, testing::sample_image(2, 4000))));
    CHECK(found(client, 2));
    reopens = stat(client, "store_reopens");
  }
  // Killed, not stopped: the acknowledged PUT is in the new file already, not only in memory.
  daemon.kill_hard();
  daemon.start();
  auto after = daemon.client();
  CHECK(found(after, 2));
  CHECK_FALSE(found(after, 1));
  CHECK(reopens == std::optional<std::uint64_t>(1));
}

TEST_CASE(
    "state dir: a second daemon on the same state directory refuses, naming the first, even with the lock file deleted") {
  TempDir dir;
  DaemonProcess daemon(dir);
  daemon.start();
  REQUIRE(::unlink((daemon.state_dir() + "/jitcached.lock").c_str()) == 0);

  // Its own socket, so that only the state directory can stop it.
  auto second =
      daemon.run_to_exit({"--foreground", "--socket", dir.file("second.sock"), "--state-dir", daemon.state_dir()},
                         std::chrono::seconds(20));
  INFO(second.output);
  CHECK(second.status == 1);
  CHECK_THAT(second.output, Catch::Contains("another jitcached (pid " + std::to_string(daemon.pid()) + ")") &&
                                Catch::Contains("state directory " + daemon.state_dir()));
  // The first one serves on.
  auto client = daemon.client();
  CHECK(client.ping());
}
