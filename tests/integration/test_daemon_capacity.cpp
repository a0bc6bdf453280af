// The real jitcached with a byte limit (--max-size) and stale drivers (--stale-driver-after): PUTs
// evict, a reply being sent survives the eviction of its entry, GC on the wire, the stats, and a
// driver change never serving an image keyed to the old build; eviction_policy gdsf (the default)
// against lru, and an unknown policy refused at start.
#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <thread>

#include <proto/key.hpp>

#include <tests/support/daemon_process.hpp>
#include <tests/support/daemon_stats.hpp>
#include <tests/support/sample_entries.hpp>
#include <tests/support/temp_dir.hpp>

using namespace jitcache;
using testing::DaemonOptions;
using testing::DaemonProcess;
using testing::stat_value;
using testing::TempDir;

namespace {

proto::KeyFields key_for_driver(std::uint64_t seed, const std::string& driver_build) {
  proto::KeyFields key = testing::sample_key(seed);
  key.driver_build = driver_build;
  return key;
}

void put_ok(client::transport::DaemonClient& client, const proto::KeyFields& key,
            const std::vector<std::uint8_t>& image, std::uint64_t compile_time_us = 0) {
  proto::PutRequest request;
  request.key = key;
  request.producer = "test";
  request.image = image;
  request.compile_time_us = compile_time_us;
  // Every entry has a fast key (schema 7); these keys' sources are named by their content digest.
  request.content_fast = proto::xxh3_128(proto::Bytes(key.content.bytes));
  auto put = client.put(request);
  INFO((put ? std::string() : put.error().message));
  REQUIRE(put);
}

}  // namespace

TEST_CASE("daemon capacity: a LOOKUP reply being sent survives the eviction of its entry, byte-identical") {
  TempDir dir;
  DaemonProcess daemon(dir, DaemonOptions{{"--max-size", "20MiB"}, {}, "warn"});
  daemon.start();
  auto writer = daemon.client();
  const auto image_a = testing::sample_image(1, 12 << 20);
  const auto image_b = testing::sample_image(2, 12 << 20);
  put_ok(writer, testing::sample_key(1), image_a);

  // Ask for A and read nothing yet: 12 MiB cannot fit in the socket buffers, so the daemon is
  // still sending when B's PUT evicts A.
  auto reader = daemon.client();
  proto::LookupRequest lookup;
  lookup.selector = proto::LookupSelector::key;
  lookup.key = testing::sample_key(1);
  const proto::Payload payload = proto::encode(lookup);
  proto::FrameHeader header;
  header.op = proto::Op::lookup;
  header.request_id = 11;
  header.payload_length = payload.size();
  const auto raw_header = proto::encode_header(header);
  auto& connection = reader.connection();
  connection.set_max_reply_bytes(64 << 20);
  REQUIRE(connection.send_raw(proto::Bytes(raw_header)));
  REQUIRE(connection.send_raw(proto::Bytes(payload)));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));

  put_ok(writer, testing::sample_key(2), image_b);  // 24 MiB > 20 MiB: A, the only other entry, goes
  CHECK(stat_value(writer, "evictions") == 1);
  CHECK(stat_value(writer, "evicted_bytes") == image_a.size());
  auto gone = writer.lookup(testing::sample_key(1));
  REQUIRE(gone);
  CHECK_FALSE(gone->has_value());

  auto reply = connection.read_reply();
  REQUIRE(reply);
  REQUIRE(reply->header.status == proto::Status::ok);
  CHECK(reply->header.request_id == 11);
  auto decoded = proto::decode_lookup_reply(proto::Bytes(reply->payload));
  REQUIRE(decoded);
  REQUIRE(decoded->image.size() == image_a.size());
  CHECK(std::equal(decoded->image.begin(), decoded->image.end(), image_a.begin()));
}

TEST_CASE("daemon capacity: PUTs keep the store within --max-size, evicting the least recently used (lru)") {
  TempDir dir;
  DaemonProcess daemon(dir,
                       DaemonOptions{{"--max-size", "4MiB", "--usage-flush-interval", "1h", "--eviction-policy", "lru"},
                                     {},
                                     "warn"});
  daemon.start();
  auto client = daemon.client();
  std::vector<std::vector<std::uint8_t>> images;
  for (std::uint64_t seed = 0; seed < 4; ++seed) {
    images.push_back(testing::sample_image(seed, 1 << 20));
    put_ok(client, testing::sample_key(seed), images.back());
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  // The hit on the oldest stays in the daemon's memory (flushes only hourly), yet counts.
  auto hit = client.lookup(testing::sample_key(0));
  REQUIRE(hit);
  REQUIRE(hit->has_value());
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  images.push_back(testing::sample_image(4, 1 << 20));
  put_ok(client, testing::sample_key(4), images.back());

  CHECK(stat_value(client, "max_size") == 4u << 20);
  CHECK(stat_value(client, "bytes_stored") <= 4u << 20);
  CHECK(stat_value(client, "evictions") == 2);  // 5 MiB: down to 3.6 - 1 MiB
  for (std::uint64_t seed : {0, 3, 4}) {
    CAPTURE(seed);
    auto found = client.lookup(testing::sample_key(seed));
    REQUIRE(found);
    CHECK(found->has_value());
  }
  for (std::uint64_t seed : {1, 2}) {
    CAPTURE(seed);
    auto found = client.lookup(testing::sample_key(seed));
    REQUIRE(found);
    CHECK_FALSE(found->has_value());
  }
}

TEST_CASE("daemon capacity: by default a small image that was costly to compile outlasts a cheap large one") {
  TempDir dir;
  DaemonProcess daemon(dir, DaemonOptions{{"--max-size", "4MiB"}, {}, "warn"});
  daemon.start();
  auto client = daemon.client();
  // Written first, so the least recently used order would take it first.
  put_ok(client, testing::sample_key(0), testing::sample_image(0, 256 << 10), 5'000'000);
  for (std::uint64_t seed = 1; seed <= 4; ++seed) {
    put_ok(client, testing::sample_key(seed), testing::sample_image(seed, 1 << 20), 10'000);
  }
  // 4.25 MiB > 4 MiB at the fourth large one: down to 3.6 - 1 MiB, one cheap large entry goes.
  CHECK(stat_value(client, "evictions") == 1);
  auto costly = client.lookup(testing::sample_key(0));
  REQUIRE(costly);
  CHECK(costly->has_value());
  auto cheap = client.lookup(testing::sample_key(1));
  REQUIRE(cheap);
  CHECK_FALSE(cheap->has_value());
}

TEST_CASE("daemon capacity: an unknown --eviction-policy stops the start and names the ones there are") {
  TempDir dir;
  DaemonProcess daemon(dir);
  auto result = daemon.run_to_exit({"--foreground", "--socket", daemon.socket_path(), "--state-dir", daemon.state_dir(),
                                    "--eviction-policy", "fifo"},
                                   std::chrono::seconds(20));
  CHECK(result.status == 2);
  CHECK_THAT(result.output, Catch::Contains("eviction") && Catch::Contains("\"fifo\" is not gdsf or lru"));
}

TEST_CASE("daemon capacity: GC removes the entries of a driver no client asks for, and says what it removed") {
  TempDir dir;
  // Stored raw, so that the bytes GC reports are the images' sizes.
  DaemonProcess daemon(dir, DaemonOptions{{"--stale-driver-after", "1s", "--compression-level", "0"}, {}, "warn"});
  daemon.start();
  auto client = daemon.client();
  auto hello = client.hello("test");
  REQUIRE(hello);
  CHECK((hello->capabilities & proto::k_capability_gc) != 0);

  const auto old_image = testing::sample_image(1, 4096);
  const auto new_image = testing::sample_image(2, 4096);
  put_ok(client, key_for_driver(1, "580.159.04"), old_image);
  put_ok(client, key_for_driver(2, "590.10"), new_image);
  // The host's driver is now 590.10: its clients ask for that build only, found or not.
  for (int i = 0; i < 8; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    REQUIRE(client.lookup(key_for_driver(100 + static_cast<std::uint64_t>(i), "590.10")));
  }

  auto gc = client.gc();
  INFO((gc ? std::string() : gc.error().message));
  REQUIRE(gc);
  CHECK(gc->evicted_entries == 1);
  CHECK(gc->stale_entries == 1);
  CHECK(gc->evicted_bytes == old_image.size());
  CHECK(gc->entries == 1);
  CHECK(gc->bytes_stored == new_image.size());
  CHECK(stat_value(client, "evictions") == 1);
  auto kept = client.lookup(key_for_driver(2, "590.10"));
  REQUIRE(kept);
  CHECK(kept->has_value());
}

TEST_CASE("daemon capacity: after a driver change a LOOKUP never gets the image keyed to the old build") {
  TempDir dir;
  DaemonProcess daemon(dir);
  daemon.start();
  auto client = daemon.client();
  const auto old_image = testing::sample_image(7, 4096);
  const proto::Checksum128 content_fast = proto::xxh3_128(proto::as_bytes("source 7"));
  proto::PutRequest request;
  request.key = key_for_driver(7, "580.159.04");
  request.producer = "test";
  request.image = old_image;
  request.content_fast = content_fast;  // so the entry has a fast key too
  REQUIRE(client.put(request));

  // Same source, arch, options and driver API; only the build changed. Neither selector finds it.
  auto after_upgrade = client.lookup(key_for_driver(7, "580.159.05"));
  REQUIRE(after_upgrade);
  CHECK_FALSE(after_upgrade->has_value());
  auto by_fast_key = client.lookup_fast(proto::fast_key_of(key_for_driver(7, "580.159.05"), content_fast));
  REQUIRE(by_fast_key);
  CHECK_FALSE(by_fast_key->has_value());
  CHECK(stat_value(client, "hits") == 0);

  // The old build still finds its own image by either selector: only the key changed.
  auto before_upgrade = client.lookup(key_for_driver(7, "580.159.04"));
  REQUIRE(before_upgrade);
  CHECK(before_upgrade->has_value());
  auto old_fast = client.lookup_fast(proto::fast_key_of(key_for_driver(7, "580.159.04"), content_fast));
  REQUIRE(old_fast);
  CHECK(old_fast->has_value());
  CHECK(stat_value(client, "hits") == 2);
}
