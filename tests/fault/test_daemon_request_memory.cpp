// Memory before payload (docs/security.md "Limits"): a request header promises a payload; the
// daemon must not allocate what it promises. Connections of one uid that send only a header
// claiming 60 MiB hold almost nothing, the ones beyond request_bytes_per_uid (and
// request_bytes_total) are answered `busy` at once, their payload is read and dropped so the
// connection stays usable, and a normal client is served meanwhile. Figures from the real daemon's
// /proc/<pid>/status.
#include <catch2/catch.hpp>

#include <chrono>
#include <thread>
#include <vector>

#include <proto/messages.hpp>

#include <tests/support/daemon_process.hpp>
#include <tests/support/daemon_stats.hpp>
#include <tests/support/process_status.hpp>
#include <tests/support/sample_entries.hpp>
#include <tests/support/temp_dir.hpp>

using namespace jitcache;
using client::transport::UnixConnection;
using testing::DaemonOptions;
using testing::DaemonProcess;
using testing::TempDir;
using namespace std::chrono_literals;

namespace {

constexpr std::uint64_t k_claimed = 60ull << 20;
constexpr std::uint64_t k_mib = 1ull << 20;

UnixConnection connect(const DaemonProcess& daemon) {
  auto connection = UnixConnection::connect(daemon.connect_options());
  REQUIRE(connection);
  return std::move(*connection);
}

// A PUT header that claims `length` bytes of payload, and nothing after it.
void send_header(UnixConnection& connection, std::uint32_t request_id, std::uint64_t length) {
  proto::FrameHeader header;
  header.op = proto::Op::put;
  header.request_id = request_id;
  header.payload_length = length;
  const auto raw = proto::encode_header(header);
  REQUIRE(connection.send_raw(proto::Bytes(raw)));
}

// The reply that arrives within `wait`, if one does.
std::optional<client::transport::Reply> reply_within(UnixConnection& connection, std::chrono::milliseconds wait) {
  auto reply = connection.read_reply(std::chrono::steady_clock::now() + wait);
  if (!reply) return std::nullopt;
  return std::move(*reply);
}

std::string message_of(const client::transport::Reply& reply) {
  auto message = proto::decode_error_message(proto::Bytes(reply.payload.data(), reply.payload.size()));
  return message ? *message : "";
}

}  // namespace

TEST_CASE("request memory: header-only connections hold almost nothing, those over request_bytes_per_uid get busy") {
  TempDir dir;
  DaemonProcess daemon(dir, DaemonOptions{{"--read-deadline", "20s"}, {}, "warn"});
  daemon.start();
  auto client = daemon.client();
  REQUIRE(client.ping());
  const std::uint64_t rss_before = testing::status_bytes(daemon.pid(), "VmRSS");

  // The default request_bytes_per_uid (256 MiB) holds four promises of 60 MiB; the other four are refused.
  constexpr int k_connections = 8;
  std::vector<UnixConnection> connections;
  for (int i = 0; i < k_connections; ++i) {
    connections.push_back(connect(daemon));
    send_header(connections.back(), static_cast<std::uint32_t>(i + 1), k_claimed);
    std::this_thread::sleep_for(20ms);  // in order, so the first four are the ones admitted
  }
  int busy = 0;
  std::vector<int> refused;
  for (int i = 0; i < k_connections; ++i) {
    auto reply = reply_within(connections[i], i < 4 ? 300ms : 5s);
    if (!reply) continue;
    INFO("connection " << i << ": " << message_of(*reply));
    CHECK(reply->header.status == proto::Status::busy);
    CHECK(reply->header.request_id == static_cast<std::uint32_t>(i + 1));
    CHECK_THAT(message_of(*reply), Catch::Contains("request_bytes_per_uid"));
    ++busy;
    refused.push_back(i);
  }
  CHECK(busy == k_connections - 4);
  CHECK(testing::stat_value(client, "requests_refused_bytes") == static_cast<std::uint64_t>(k_connections - 4));
  CHECK(testing::stat_value(client, "requests_refused_bytes_per_uid") == static_cast<std::uint64_t>(k_connections - 4));

  // Nothing was allocated for what was only promised: before, each header took its 60 MiB at once.
  std::this_thread::sleep_for(200ms);
  const std::uint64_t peak = testing::status_bytes(daemon.pid(), "VmHWM");
  const std::uint64_t rss = testing::status_bytes(daemon.pid(), "VmRSS");
  INFO("VmRSS " << rss_before / k_mib << " -> " << rss / k_mib << " MiB, VmHWM " << peak / k_mib << " MiB");
  CHECK(rss < rss_before + 32 * k_mib);
  CHECK(peak < rss_before + 64 * k_mib);

  // A normal client of the same uid is served, a PUT that needs the budget's last megabytes too.
  const auto image = testing::sample_image(1, 2 * k_mib);
  REQUIRE(client.put(testing::sample_put(1, image)));
  auto found = client.lookup(testing::sample_key(1));
  REQUIRE(found);
  CHECK(found->has_value());

  // A refused request's payload is read and dropped: its connection serves the next request.
  REQUIRE(!refused.empty());
  UnixConnection& again = connections[refused.front()];
  REQUIRE(again.send_raw(proto::Bytes(std::vector<std::uint8_t>(k_claimed, 0))));
  const auto ping = proto::encode_frame(proto::Op::ping, proto::Status::ok, 99, {});
  REQUIRE(again.send_raw(proto::Bytes(ping)));
  auto pong = reply_within(again, 10s);
  REQUIRE(pong);
  CHECK(pong->header.status == proto::Status::ok);
  CHECK(pong->header.request_id == 99);
  CHECK(testing::status_bytes(daemon.pid(), "VmHWM") < rss_before + 64 * k_mib);

  // Once the promises are withdrawn (the connections close), the budget is free again.
  connections.clear();
  std::this_thread::sleep_for(200ms);
  auto next = connect(daemon);
  send_header(next, 1, k_claimed);
  CHECK_FALSE(reply_within(next, 300ms));  // waiting for its payload, not refused
  CHECK(testing::stat_value(client, "requests_refused_bytes") == static_cast<std::uint64_t>(k_connections - 4));
  CHECK(daemon.running());
}

TEST_CASE("request memory: request_bytes_total bounds every uid's requests together") {
  TempDir dir;
  DaemonProcess daemon(dir,
                       DaemonOptions{{"--request-bytes-per-uid", "0", "--request-bytes-total", "100MiB"}, {}, "warn"});
  daemon.start();
  auto first = connect(daemon);
  send_header(first, 1, k_claimed);
  CHECK_FALSE(reply_within(first, 300ms));
  auto second = connect(daemon);
  send_header(second, 2, k_claimed);
  auto reply = reply_within(second, 5s);
  REQUIRE(reply);
  CHECK(reply->header.status == proto::Status::busy);
  CHECK_THAT(message_of(*reply), Catch::Contains("request_bytes_total"));
  auto client = daemon.client();
  CHECK(testing::stat_value(client, "requests_refused_bytes") == 1);
  CHECK(testing::stat_value(client, "requests_refused_bytes_per_uid") == 0);
  CHECK(client.ping());  // small requests need no budget
}
