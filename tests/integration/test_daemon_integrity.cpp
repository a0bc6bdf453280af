// The real jitcached and a damaged database (docs/operations.md "Corruption"): a file that fails
// quick_check at start, or that SQLite finds corrupt while the daemon serves, is moved aside under
// a time-stamped name and replaced by an empty store; the daemon keeps answering and counts
// store_resets.
#include <catch2/catch.hpp>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include <tests/support/daemon_process.hpp>
#include <tests/support/daemon_stats.hpp>
#include <tests/support/sample_entries.hpp>
#include <tests/support/store_damage.hpp>
#include <tests/support/temp_dir.hpp>

using namespace jitcache;
using testing::DaemonOptions;
using testing::DaemonProcess;
using testing::stat_value;
using testing::TempDir;

namespace {

std::filesystem::path database_of(const DaemonProcess& daemon) {
  return std::filesystem::path(daemon.state_dir()) / "jitcache.db";
}

std::vector<std::string> moved_aside(const DaemonProcess& daemon) {
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(daemon.state_dir())) {
    const std::string name = entry.path().filename().string();
    if (std::regex_match(name, std::regex(R"(jitcache\.db\.corrupt-\d{8}T\d{6}Z)"))) names.push_back(name);
  }
  return names;
}

std::string read_all(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// Entries of a few pages' worth, then a clean stop, so that everything is in the main file.
void fill_and_stop(DaemonProcess& daemon, int count) {
  daemon.start();
  auto client = daemon.client();
  for (int i = 0; i < count; ++i) REQUIRE(client.put(testing::sample_put(i, testing::sample_image(i, 30'000))));
  REQUIRE(daemon.stop() == 0);
}

}  // namespace

TEST_CASE("daemon integrity: a database that fails quick_check at start is moved aside and the daemon serves") {
  TempDir dir;
  // error: the reset is logged at that level.
  DaemonProcess daemon(dir, DaemonOptions{{}, {}, "error"});
  fill_and_stop(daemon, 20);
  testing::overwrite_pages_after_the_first(database_of(daemon));

  daemon.start();
  const auto names = moved_aside(daemon);
  REQUIRE(names.size() == 1);
  const std::string log = read_all(daemon.log_path());
  CHECK(log.find("moved aside to") != std::string::npos);
  CHECK(log.find(names[0]) != std::string::npos);

  auto client = daemon.client();
  CHECK(stat_value(client, "entries") == 0);
  auto miss = client.lookup(testing::sample_key(3));
  REQUIRE(miss);
  CHECK_FALSE(miss->has_value());
  const auto image = testing::sample_image(100, 5000);
  REQUIRE(client.put(testing::sample_put(100, image)));
  auto hit = client.lookup(testing::sample_key(100));
  REQUIRE(hit);
  REQUIRE(hit->has_value());
  CHECK((*hit)->image == image);
  // quick_check passing is no reset of a running store.
  CHECK(stat_value(client, "store_resets") == 0);
  REQUIRE(daemon.stop() == 0);
}

TEST_CASE("daemon integrity: corruption found while serving resets the store without the daemon exiting") {
  TempDir dir;
  // No hot image cache, so the LOOKUP below reads the damaged file.
  DaemonProcess daemon(dir, DaemonOptions{{"--hot-cache-size", "0"}, {}, "error"});
  fill_and_stop(daemon, 40);
  daemon.start();  // quick_check passes: the file is still healthy
  REQUIRE(moved_aside(daemon).empty());
  testing::overwrite_pages_after_the_first(database_of(daemon));

  auto client = daemon.client();
  // The request that hits the damage fails (internal); its connection and the daemon live on.
  auto failed = client.lookup(testing::sample_key(7));
  CHECK_FALSE(failed.ok());
  REQUIRE(daemon.running());
  // The reset may finish just after the failed request's answer went out (the answer does not wait
  // for the swap): give it a moment, then the damaged file must have been moved aside once.
  for (int i = 0; i < 100 && moved_aside(daemon).empty(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  CHECK(moved_aside(daemon).size() == 1);

  auto again = daemon.client();
  CHECK(stat_value(again, "store_resets") == 1);
  CHECK(stat_value(again, "entries") == 0);
  const auto image = testing::sample_image(200, 8000);
  REQUIRE(again.put(testing::sample_put(200, image)));
  auto hit = again.lookup(testing::sample_key(200));
  REQUIRE(hit);
  REQUIRE(hit->has_value());
  CHECK((*hit)->image == image);
  REQUIRE(daemon.stop() == 0);
}
