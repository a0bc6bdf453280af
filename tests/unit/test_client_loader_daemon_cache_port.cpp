// The real cache port (client/src/loader/daemon_cache_port.hpp) against a scripted stand-in daemon
// (tests/support/scripted_daemon.hpp): the rules every call of a load shares — a daemon that fails
// a call is not asked again in that load and is skipped by the next loads for a while; the
// capabilities a connection learned travel with it back to the pool; LOOKUPs are counted.
#include <client/src/loader/daemon_cache_port.hpp>
#include <proto/jit_options.hpp>

#include <catch2/catch.hpp>

#include <memory>
#include <string>

#include <tests/support/scripted_daemon.hpp>
#include <tests/support/temp_dir.hpp>

using namespace jitcache;
using client::loader::ClientCounters;
using client::loader::ClientSettings;
using client::loader::DaemonCachePort;
using client::loader::DaemonLink;
using testing::answer;
using testing::read_request;
using testing::Request;
using testing::ScriptedDaemon;
using testing::Step;

namespace {

proto::FastKey some_fast_key() {
  proto::FastKey key;
  key.content_fast = proto::xxh3_128(proto::as_bytes(std::string(".version 9.0\n")));
  key.arch = "sm_90a";
  key.driver_api = 13000;
  key.driver_build = "580.159.04";
  key.options = proto::default_option_text();
  return key;
}

std::shared_ptr<DaemonLink> link_to(const ScriptedDaemon& daemon) {
  ClientSettings settings;
  settings.socket_path = daemon.options().socket_path;
  settings.request_timeout = std::chrono::seconds(5);
  settings.quiet = true;
  return std::make_shared<DaemonLink>(settings);
}

// Reads one request and answers it with bytes that are no reply at all.
Step answer_garbage() {
  return [](int fd) {
    Request request;
    if (!read_request(fd, request)) return;
    const char garbage[] = "HTTP/1.1 400 Bad Request\r\n\r\n";
    [[maybe_unused]] auto n = ::send(fd, garbage, sizeof(garbage), MSG_NOSIGNAL);
  };
}

// Answers HELLO with `capabilities` and every LOOKUP with not_found, until the client leaves.
Step serve_misses(std::uint64_t capabilities) {
  return [capabilities](int fd) {
    for (Request request; read_request(fd, request);) {
      if (request.header.op == proto::Op::hello) {
        proto::HelloReply hello;
        hello.capabilities = capabilities;
        hello.daemon_version = "scripted";
        hello.max_frame_bytes = proto::k_default_max_frame_bytes;
        if (!answer(fd, request, proto::Status::ok, proto::encode(hello))) return;
      } else if (!answer(fd, request, proto::Status::not_found, proto::encode_error_message("no entry"))) {
        return;
      }
    }
  };
}

}  // namespace

TEST_CASE("daemon cache port: a daemon that fails a call is not asked again in that load, and later loads skip it") {
  testing::TempDir dir;
  ScriptedDaemon daemon(dir.file("jitcached.sock"), {answer_garbage(), answer_garbage()});
  auto link = link_to(daemon);
  ClientCounters counters;
  {
    DaemonCachePort port(link, counters);
    REQUIRE(port.connect().ok());
    auto fetched = port.lookup_fast(some_fast_key(), client::transport::ImageDelivery::bytes);
    REQUIRE_FALSE(fetched.ok());
    CHECK(fetched.error().reply_status == 0);
    const int accepted = daemon.accepted();

    // The rebuilt image's PUT of the same load: refused at once, without a connection.
    proto::PutRequest put;
    auto stored = port.put(put);
    REQUIRE_FALSE(stored.ok());
    CHECK(stored.error().code == common::ErrorCode::unavailable);
    CHECK_THAT(stored.error().message, Catch::Contains("failed earlier in this load"));
    CHECK_FALSE(port.connect().ok());
    CHECK(daemon.accepted() == accepted);
  }
  // The next load: the daemon is in back-off.
  DaemonCachePort next(link, counters);
  auto connected = next.connect();
  REQUIRE_FALSE(connected.ok());
  CHECK_THAT(connected.error().message, Catch::Contains("moments ago"));
  CHECK(counters.lookups >= 1);
}

TEST_CASE("daemon cache port: the capabilities a connection learned come back with it from the pool") {
  testing::TempDir dir;
  const std::uint64_t bits = proto::k_capability_store | proto::k_capability_fast_key;
  ScriptedDaemon daemon(dir.file("jitcached.sock"), {serve_misses(bits)});
  auto link = link_to(daemon);
  ClientCounters counters;
  {
    DaemonCachePort port(link, counters);
    REQUIRE(port.connect().ok());
    CHECK_FALSE(port.known_capabilities().has_value());  // no HELLO yet: a hit would not need one
    auto missed = port.lookup_fast(some_fast_key(), client::transport::ImageDelivery::bytes);
    REQUIRE(missed.ok());
    CHECK_FALSE(missed->has_value());
    auto capabilities = port.capabilities();
    REQUIRE(capabilities.ok());
    CHECK(*capabilities == bits);
    CHECK(port.known_capabilities() == bits);
  }
  DaemonCachePort next(link, counters);
  REQUIRE(next.connect().ok());
  CHECK(next.known_capabilities() == bits);  // the pooled connection, HELLO already answered
  CHECK(daemon.accepted() == 1);
  auto missed = next.lookup_fast(some_fast_key(), client::transport::ImageDelivery::bytes);
  REQUIRE(missed.ok());
  CHECK(counters.lookups == 2);
}
