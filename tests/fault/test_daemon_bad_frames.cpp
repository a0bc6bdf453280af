// Garbage at the socket: every kind of bad frame gets an error reply or a dropped connection, and
// the next client is served normally (issue: "throws garbage at its socket without hurting it").
#include <catch2/catch.hpp>

#include <poll.h>
#include <sys/socket.h>

#include <thread>

#include <tests/support/daemon_process.hpp>
#include <tests/support/sample_entries.hpp>
#include <tests/support/temp_dir.hpp>

using namespace jitcache;
using client::transport::UnixConnection;
using testing::DaemonProcess;
using testing::TempDir;

namespace {

UnixConnection raw_connection(const DaemonProcess& daemon) {
  auto options = daemon.connect_options();
  options.io_timeout = std::chrono::seconds(10);
  auto c = UnixConnection::connect(options);
  REQUIRE(c);
  return std::move(*c);
}

proto::HeaderBytes header_bytes(proto::Op op, std::uint64_t payload_length, std::uint32_t request_id = 5) {
  proto::FrameHeader h;
  h.op = op;
  h.payload_length = payload_length;
  h.request_id = request_id;
  return proto::encode_header(h);
}

// The next, well-behaved client gets a full round trip: PUT then LOOKUP of a fresh key.
void expect_daemon_healthy(const DaemonProcess& daemon, std::uint64_t seed) {
  auto client = daemon.client();
  const auto image = testing::sample_image(seed, 4096);
  REQUIRE(client.put(testing::sample_put(seed, image)));
  auto found = client.lookup(testing::sample_key(seed));
  REQUIRE(found);
  REQUIRE(found->has_value());
  CHECK((*found)->image == image);
}

// Reads at least `count` bytes of whatever the daemon sends (the socket is non-blocking).
bool receive_some(int fd, std::size_t count) {
  std::uint8_t buffer[4096];
  std::size_t got = 0;
  while (got < count) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 5000) <= 0) return false;
    ssize_t n = ::recv(fd, buffer, std::min(sizeof(buffer), count - got), 0);
    if (n <= 0) return false;
    got += static_cast<std::size_t>(n);
  }
  return true;
}

std::string error_text(const client::transport::Reply& reply) {
  auto message = proto::decode_error_message(proto::Bytes(reply.payload));
  return message ? *message : std::string("<unreadable>");
}

}  // namespace

TEST_CASE("bad frames: each is answered or dropped, and the next client is served") {
  TempDir dir;
  DaemonProcess daemon(dir, {{"--idle-timeout", "1s", "--read-deadline", "1s"}, {}, "warn"});
  daemon.start();

  SECTION("a wrong magic gets bad_request and the connection is closed") {
    auto c = raw_connection(daemon);
    auto raw = header_bytes(proto::Op::ping, 0);
    raw[0] = 'X';
    REQUIRE(c.send_raw(proto::Bytes(raw)));
    auto reply = c.read_reply();
    REQUIRE(reply);
    CHECK(reply->header.status == proto::Status::bad_request);
    CHECK_THAT(error_text(*reply), Catch::Contains("magic"));
    CHECK(c.wait_for_close());
  }
  SECTION("a wrong protocol version gets bad_request naming the versions, then close") {
    auto c = raw_connection(daemon);
    auto raw = header_bytes(proto::Op::ping, 0);
    raw[4] = 9;
    REQUIRE(c.send_raw(proto::Bytes(raw)));
    auto reply = c.read_reply();
    REQUIRE(reply);
    CHECK(reply->header.status == proto::Status::bad_request);
    CHECK_THAT(error_text(*reply), Catch::Contains("protocol version 9"));
    CHECK(c.wait_for_close());
  }
  SECTION("a payload length of 2^40 gets too_large before anything is read or allocated") {
    auto c = raw_connection(daemon);
    auto raw = header_bytes(proto::Op::put, 1ull << 40);
    REQUIRE(c.send_raw(proto::Bytes(raw)));
    auto reply = c.read_reply();
    REQUIRE(reply);
    CHECK(reply->header.status == proto::Status::too_large);
    CHECK(reply->header.request_id == 5);
    CHECK(c.wait_for_close());
  }
  SECTION("garbage bytes get an error or a close") {
    auto c = raw_connection(daemon);
    auto garbage = testing::sample_image(77, 1000);
    REQUIRE(c.send_raw(proto::Bytes(garbage)));
    auto reply = c.read_reply();
    if (reply) CHECK(reply->header.status != proto::Status::ok);
    CHECK(c.wait_for_close());
  }
  SECTION("a truncated frame is dropped at the read deadline") {
    auto c = raw_connection(daemon);
    auto raw = header_bytes(proto::Op::put, 5000);
    REQUIRE(c.send_raw(proto::Bytes(raw).first(10)));
    const auto started = std::chrono::steady_clock::now();
    CHECK(c.wait_for_close());
    CHECK(std::chrono::steady_clock::now() - started < std::chrono::seconds(5));
  }
  SECTION("a malformed payload gets bad_request and the connection stays usable") {
    auto c = raw_connection(daemon);
    const proto::Payload junk{0, 1};  // selector "key", then a key cut short
    auto reply = c.call(proto::Op::lookup, junk);
    REQUIRE(reply);
    CHECK(reply->header.status == proto::Status::bad_request);
    auto ping = c.call(proto::Op::ping, {});
    REQUIRE(ping);
    CHECK(ping->header.status == proto::Status::ok);
  }
  SECTION(
      "an unknown op, a VERIFY with a payload and an empty COMPILE get bad_request with a clear message, and the connection stays") {
    auto c = raw_connection(daemon);
    auto unknown = c.call(static_cast<proto::Op>(999), {});
    REQUIRE(unknown);
    CHECK(unknown->header.status == proto::Status::bad_request);
    CHECK_THAT(error_text(*unknown), Catch::Contains("op 999"));
    // VERIFY (op 11, once reserved) is implemented: its request is empty, so a byte is malformed.
    auto verify = c.call(proto::Op::verify, {0x01});
    REQUIRE(verify);
    CHECK(verify->header.status == proto::Status::bad_request);
    CHECK_THAT(error_text(*verify), Catch::Contains("VERIFY"));
    CHECK(c.call(proto::Op::ping, {})->header.status == proto::Status::ok);
    // COMPILE is implemented: an empty payload is a malformed request, not an unknown op.
    auto compile = c.call(proto::Op::compile, {});
    REQUIRE(compile);
    CHECK(compile->header.status == proto::Status::bad_request);
    CHECK_THAT(error_text(*compile), Catch::Contains("key_schema"));
    CHECK(c.call(proto::Op::ping, {})->header.status == proto::Status::ok);
  }
  SECTION("a key with an invalid field is refused with a message naming the field") {
    auto client = daemon.client();
    auto request_image = testing::sample_image(5, 100);
    auto request = testing::sample_put(5, request_image);
    request.key.arch = "sm_9x";
    auto put = client.put(request);
    REQUIRE_FALSE(put);
    CHECK_THAT(put.error().message, Catch::Contains("bad_request") && Catch::Contains("sm_9x"));
  }
  SECTION("a client that connects and never writes is dropped at the idle timeout while others are served") {
    auto silent = raw_connection(daemon);
    expect_daemon_healthy(daemon, 10);
    CHECK(silent.wait_for_close());
  }
  SECTION("a client that disconnects in the middle of a large reply does not hurt the daemon") {
    auto writer = daemon.client();
    const auto big = testing::sample_image(11, 4 << 20);
    REQUIRE(writer.put(testing::sample_put(11, big)));
    for (int i = 0; i < 20; ++i) {
      auto c = raw_connection(daemon);
      proto::LookupRequest request;
      request.key = testing::sample_key(11);
      const proto::Payload payload = proto::encode(request);
      const auto raw = header_bytes(proto::Op::lookup, payload.size());
      REQUIRE(c.send_raw(proto::Bytes(raw)));
      REQUIRE(c.send_raw(proto::Bytes(payload)));
      REQUIRE(receive_some(c.fd(), 100));
      // c goes out of scope here: the daemon is mid-write of a 4 MiB reply.
    }
  }

  expect_daemon_healthy(daemon, 1000);
  CHECK(daemon.running());
}

TEST_CASE("bad frames: a flood of connections that send garbage leaves the daemon serving") {
  TempDir dir;
  DaemonProcess daemon(dir, {{"--idle-timeout", "1s", "--read-deadline", "1s"}, {}, "warn"});
  daemon.start();
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 50; ++i) {
        auto options = daemon.connect_options();
        options.io_timeout = std::chrono::seconds(5);
        auto c = UnixConnection::connect(options);
        if (!c) continue;
        auto garbage = testing::sample_image(static_cast<std::uint64_t>(t * 1000 + i), 64 + (i * 37) % 300);
        (void)c->send_raw(proto::Bytes(garbage));
      }
    });
  }
  for (auto& t : threads) t.join();
  expect_daemon_healthy(daemon, 2000);
  auto stats = daemon.client().stats();
  REQUIRE(stats);
}
