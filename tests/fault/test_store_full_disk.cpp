// A full disk under the store: the state dir is a tmpfs of its own, 8 MiB, nearly
// filled by a filler file, and PUTs fill the rest. And LOOKUPs of made-up
// drivers while the disk is full: what the failing usage flushes keep stays bounded. A PUT that does not fit fails with
// the status no_space (PROTOCOL.md §3), LOOKUP, LIST and STATS keep working (across a daemon restart too), nothing
// half-written is ever served or left in the file, and PUTs succeed again once the filler is deleted. Skips with a
// visible reason where a tmpfs cannot be mounted.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <fstream>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <daemon/store/driver_log.hpp>

#include <tests/support/daemon_process.hpp>
#include <tests/support/daemon_stats.hpp>
#include <tests/support/sample_entries.hpp>
#include <tests/support/sqlite_text_query.hpp>
#include <tests/support/store_file_check.hpp>
#include <tests/support/temp_dir.hpp>
#include <tests/support/test_skip.hpp>
#include <tests/support/tmpfs_mount.hpp>

using namespace jitcache;
using testing::DaemonProcess;
using testing::TempDir;
using testing::TmpfsMount;

namespace {

using Image = std::vector<std::uint8_t>;

void write_filler(const std::string& path, std::uint64_t bytes) {
  std::ofstream out(path, std::ios::binary);
  const std::string chunk(64 * 1024, 'f');
  for (std::uint64_t left = bytes; left > 0;) {
    const auto n = std::min<std::uint64_t>(left, chunk.size());
    out.write(chunk.data(), static_cast<std::streamsize>(n));
    left -= n;
  }
  out.flush();
  REQUIRE(out.good());
}

// Every acknowledged image is served byte-identical; every key whose PUT failed is a miss.
void check_served(DaemonProcess& daemon, const std::map<std::uint64_t, Image>& stored,
                  const std::vector<std::uint64_t>& refused) {
  auto client = daemon.client();
  for (const auto& [key, image] : stored) {
    INFO("key " << key);
    auto found = client.lookup(testing::sample_key(key));
    REQUIRE(found);
    REQUIRE(found->has_value());
    const auto bytes = (*found)->bytes();
    CHECK(Image(bytes.begin(), bytes.end()) == image);
  }
  for (auto key : refused) {
    INFO("refused key " << key);
    auto found = client.lookup(testing::sample_key(key));
    REQUIRE(found);
    CHECK_FALSE(found->has_value());
  }
}

// The daemon with its store on an 8 MiB tmpfs of its own, compiling off and flushing usage every
// 100 ms. Members in the order tmpfs_mount.hpp asks for: the daemon dies first, the directory last.
struct DaemonOnSmallDisk {
  TempDir dir{"jitcache-full-disk"};
  TmpfsMount mount{dir.file("store"), "8m"};
  DaemonProcess daemon{dir,
                       testing::DaemonOptions{{"--usage-flush-interval", "100ms"}, {{"JITCACHE_COMPILE", "false"}}}};

  // Starts the daemon; false, with a visible skip, where the tmpfs could not be mounted.
  bool start() {
    if (!mount.mounted()) {
      JITCACHE_MARK_SKIPPED(mount.error());
      return false;
    }
    daemon.start();
    return true;
  }
};

void check_file(const DaemonProcess& daemon, std::size_t entries) {
  const auto file = testing::check_store_file(daemon.state_dir() + "/jitcache.db");
  INFO("open: " << file.open_error << " quick_check: " << file.quick_check);
  REQUIRE(file.open_error.empty());
  CHECK(file.quick_check == "ok");
  for (const auto& bad : file.bad) FAIL_CHECK("damaged entry in the file: " << bad);
  CHECK(file.entries == entries);
}

}  // namespace

TEST_CASE(
    "store full disk: a PUT that does not fit fails with no_space, reads keep working, and PUTs work again once space returns") {
  DaemonOnSmallDisk disk;
  if (!disk.start()) return;
  DaemonProcess& daemon = disk.daemon;
  const TmpfsMount& mount = disk.mount;

  // A few entries while there is room, then a filler that leaves about 1.5 MiB.
  std::map<std::uint64_t, Image> stored;
  std::uint64_t next_key = 1;
  {
    auto client = daemon.client();
    for (int i = 0; i < 8; ++i, ++next_key) {
      auto image = testing::sample_image(next_key, 20 * 1024);
      REQUIRE(client.put(testing::sample_put(next_key, image)));
      stored.emplace(next_key, std::move(image));
    }
  }
  const std::string filler = daemon.state_dir() + "/filler";
  const std::uint64_t leave = 1536 * 1024;
  REQUIRE(mount.free_bytes() > leave);
  write_filler(filler, mount.free_bytes() - leave);

  // PUT until the disk is full. 48 KiB images: a handful fit, then one fails.
  std::vector<std::uint64_t> refused;
  std::uint64_t successes_after_filler = 0;
  {
    auto client = daemon.client();
    for (int i = 0; i < 200 && refused.empty(); ++i, ++next_key) {
      auto image = testing::sample_image(next_key, 48 * 1024);
      auto put = client.put(testing::sample_put(next_key, image));
      if (put) {
        stored.emplace(next_key, std::move(image));
        ++successes_after_filler;
        continue;
      }
      INFO("PUT failed with: " << put.error().message);
      CHECK(put.error().reply_status == static_cast<std::uint16_t>(proto::Status::no_space));
      CHECK(put.error().code == common::ErrorCode::no_space);
      CHECK_THAT(put.error().message, Catch::StartsWith("no_space: "));
      refused.push_back(next_key);
    }
    REQUIRE(refused.size() == 1);
    CHECK(successes_after_filler > 0);
    CHECK(testing::stat_value(client, "errors.no_space") == 1);
    CHECK(testing::stat_value(client, "errors.internal") == 0);

    // Still full: smaller PUTs may squeeze in or fail, but only ever with no_space.
    for (std::size_t size : {32 * 1024, 8 * 1024, 1024, 200}) {
      auto image = testing::sample_image(next_key, size);
      auto put = client.put(testing::sample_put(next_key, image));
      if (put) {
        stored.emplace(next_key, std::move(image));
      } else {
        INFO("PUT of " << size << " bytes failed with: " << put.error().message);
        CHECK(put.error().reply_status == static_cast<std::uint16_t>(proto::Status::no_space));
        refused.push_back(next_key);
      }
      ++next_key;
    }
    CHECK(testing::stat_value(client, "entries") == stored.size());
    proto::ListRequest list;
    list.limit = 1000;
    auto listed = client.list(list);
    REQUIRE(listed);
    CHECK(listed->entries.size() == stored.size());
  }

  // Reads while full: every stored image, byte-identical; no trace of the refused ones. The hits
  // these make cannot be flushed (the usage flush fails with no_space and keeps them in memory).
  check_served(daemon, stored, refused);
  check_file(daemon, stored.size());

  // A daemon killed and restarted on the full disk still opens its store and serves it.
  daemon.kill_hard();
  daemon.start();
  check_served(daemon, stored, refused);
  check_file(daemon, stored.size());

  // Space returns: the refused PUTs now succeed, and so does a larger one.
  REQUIRE(::unlink(filler.c_str()) == 0);
  {
    auto client = daemon.client();
    for (auto key : refused) {
      auto image = testing::sample_image(key, 48 * 1024);
      auto put = client.put(testing::sample_put(key, image));
      INFO("PUT after freeing space: " << (put ? std::string("ok") : put.error().message));
      REQUIRE(put);
      stored.emplace(key, std::move(image));
    }
    auto image = testing::sample_image(next_key, 512 * 1024);
    REQUIRE(client.put(testing::sample_put(next_key, image)));
    stored.emplace(next_key, std::move(image));
  }
  check_served(daemon, stored, {});
  REQUIRE(daemon.stop() == 0);
  daemon.start();
  check_served(daemon, stored, {});
  check_file(daemon, stored.size());
}

namespace {

// Writes until the file system says no: not a block left for a WAL frame.
void fill_up(const std::string& path) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  REQUIRE(fd >= 0);
  const std::string chunk(4096, 'f');
  while (::write(fd, chunk.data(), chunk.size()) > 0) {
  }
  ::close(fd);
}

// A STATS value, or nullopt when the daemon has no such counter.
std::optional<std::uint64_t> optional_stat(client::transport::DaemonClient& client, const std::string& name) {
  auto stats = client.stats();
  REQUIRE(stats);
  for (const auto& [n, v] : stats->values) {
    if (n == name) return v;
  }
  return std::nullopt;
}

std::uint64_t resident_kib(pid_t pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stoull(line.substr(6));
  }
  return 0;
}

}  // namespace

TEST_CASE(
    "store full disk: LOOKUPs naming made-up drivers hold bounded memory while usage flushes fail, and add no drivers rows") {
  DaemonOnSmallDisk disk;
  if (!disk.start()) return;
  DaemonProcess& daemon = disk.daemon;
  const TmpfsMount& mount = disk.mount;
  auto client = daemon.client();
  const auto image = testing::sample_image(1, 4096);
  REQUIRE(client.put(testing::sample_put(1, image)));

  // Full to the last block: every flush that has something to write (the hits below) fails.
  const std::string filler = daemon.state_dir() + "/filler";
  fill_up(filler);
  REQUIRE(mount.free_bytes() < 4096);
  const std::uint64_t rss_before = resident_kib(daemon.pid());

  constexpr int k_made_up = 20000;
  for (int i = 0; i < k_made_up; ++i) {
    proto::KeyFields key = testing::sample_key(1);
    if (i % 100 == 0) {
      auto hit = client.lookup(key);
      REQUIRE(hit);
      REQUIRE(hit->has_value());
    }
    key.driver_build = "made.up." + std::to_string(i) + std::string(40, 'x');
    auto miss = client.lookup(key);
    REQUIRE(miss);
    REQUIRE_FALSE(miss->has_value());
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(500));  // a few failed flushes
  CHECK_THAT(testing::read_file(daemon.log_path()), Catch::Contains("could not write usage counters"));
  const std::uint64_t rss_after = resident_kib(daemon.pid());
  const auto pending = optional_stat(client, "usage_pending");
  const auto dropped = optional_stat(client, "usage_dropped");
  INFO("pending " << pending.value_or(0) << ", dropped " << dropped.value_or(0) << ", VmRSS " << rss_before << " -> "
                  << rss_after << " KiB");
  // The made-up drivers, at most k_max_asked_drivers of them, the real one (served) and the entry's hits.
  CHECK(pending.value_or(UINT64_MAX) <= daemon::store::k_max_asked_drivers + 2);
  CHECK(dropped.value_or(0) >= k_made_up - daemon::store::k_max_asked_drivers);
  CHECK(rss_after < rss_before + 32 * 1024);

  // Space returns: the next flush writes the hits and the real driver's use, and nothing of the
  // made-up ones reaches the file.
  REQUIRE(::unlink(filler.c_str()) == 0);
  const std::string db = daemon.state_dir() + "/jitcache.db";
  const std::string all_hits = std::to_string(k_made_up / 100);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (testing::query_text(db, "SELECT hits FROM entries") != all_hits &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  CHECK(testing::query_text(db, "SELECT hits FROM entries") == all_hits);
  CHECK(testing::query_text(db, "SELECT COUNT(*) FROM drivers") == "1");
  CHECK(optional_stat(client, "usage_pending") == std::optional<std::uint64_t>(0));
}
