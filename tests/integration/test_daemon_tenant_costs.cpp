// EXPLAIN costs another tenant's LOOKUP nothing (docs/security.md "Who pays for what"): with 65 536
// entries of one content in one uid's namespace (planted through SQLite, as that uid's PUTs would
// leave them), a flood of EXPLAINs of that content from four connections leaves the LOOKUP p50 of
// another connection near what it was without the flood. The flood's uid gets `busy` past 2
// EXPLAINs waiting (daemon/server/lanes.hpp). The real daemon with 2 worker threads.
#include <catch2/catch.hpp>

#include <sqlite3.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include <proto/explain_messages.hpp>
#include <proto/key.hpp>

#include <tests/support/daemon_process.hpp>
#include <tests/support/sample_entries.hpp>
#include <tests/support/temp_dir.hpp>

using namespace jitcache;
using namespace std::chrono_literals;
using testing::DaemonOptions;
using testing::DaemonProcess;
using testing::TempDir;

namespace {

constexpr int k_crowd_namespace = 1001;

// Copies every entry into namespace k_crowd_namespace under new key ids, `doublings` times.
void plant_crowd(const std::string& db_path, int doublings) {
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open(db_path.c_str(), &db) == SQLITE_OK);
  sqlite3_busy_timeout(db, 10'000);
  for (int i = 0; i < doublings; ++i) {
    const std::string sql =
        "INSERT INTO entries (key_id, namespace, key_schema, content_digest, arch, driver_api, driver_build, options,"
        " producer, codec, raw_size, stored_size, checksum, created_at_ms, last_used_at_ms, hits, compile_time_us,"
        " content_fast, fast_key_id) SELECT randomblob(32), " +
        std::to_string(k_crowd_namespace) +
        ", key_schema, content_digest, arch, driver_api, driver_build, options, producer, codec, raw_size,"
        " stored_size, checksum, created_at_ms, last_used_at_ms, hits, compile_time_us, content_fast,"
        " randomblob(32) FROM entries";
    char* error = nullptr;
    const int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &error);
    INFO((error != nullptr ? error : ""));
    sqlite3_free(error);
    REQUIRE(rc == SQLITE_OK);
  }
  sqlite3_close(db);
}

// The median of `count` LOOKUP hits of `key`, in milliseconds.
double lookup_p50_ms(client::transport::DaemonClient& client, const proto::KeyFields& key, int count) {
  std::vector<double> ms;
  for (int i = 0; i < count; ++i) {
    const auto start = std::chrono::steady_clock::now();
    auto hit = client.lookup(key);
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
    REQUIRE(hit);
    REQUIRE(hit->has_value());
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

}  // namespace

TEST_CASE("tenant costs: an EXPLAIN flood of a crowded content leaves another connection's LOOKUP p50 near its own") {
  TempDir dir;
  DaemonProcess daemon(dir, DaemonOptions{{"--worker-threads", "2"}, {}, "warn"});
  daemon.start();
  const proto::KeyFields key = testing::sample_key(1);
  const auto image = testing::sample_image(1, 4096);
  auto client = daemon.client();
  REQUIRE(client.put(testing::sample_put(1, image)));
  plant_crowd(daemon.state_dir() + "/jitcache.db", 16);  // 65 535 more entries of the content

  const double quiet_ms = lookup_p50_ms(client, key, 200);
  std::atomic<bool> stop{false};
  std::atomic<int> answered{0};
  std::atomic<int> refused{0};
  std::vector<std::thread> flood;
  for (int c = 0; c < 4; ++c) {
    flood.emplace_back([&] {
      auto flooder = daemon.client();
      while (!stop) {
        auto reply = flooder.explain(proto::ExplainRequest{proto::ExplainSelector::key, key, {}});
        if (reply) {
          ++answered;
        } else {
          ++refused;
          std::this_thread::sleep_for(1ms);
        }
      }
    });
  }
  std::this_thread::sleep_for(200ms);
  const double flooded_ms = lookup_p50_ms(client, key, 200);
  stop = true;
  for (auto& t : flood) t.join();
  INFO("LOOKUP p50 " << quiet_ms << " ms quiet, " << flooded_ms << " ms under the flood; EXPLAINs answered " << answered
                     << ", busy " << refused);
  CHECK(answered > 0);
  CHECK(refused > 0);  // 4 connections of one uid: past 2 waiting, busy
  // Before, each EXPLAIN sorted every row of the content on a LOOKUP thread: tens of ms each here.
  CHECK(flooded_ms < quiet_ms + 5.0);
}
