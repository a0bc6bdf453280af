// DaemonClient's retry on a fresh connection (daemon_client.hpp, docs/operations.md "Restarts"),
// against a scripted stand-in daemon on a real Unix socket: each connection it accepts is handled
// by the next step of a script, so a lost connection or an `unavailable` answer happens exactly
// where the test says, not by the timing of a real drain.
#include <catch2/catch.hpp>

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <functional>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include <client/src/transport/daemon_client.hpp>
#include <proto/messages.hpp>

#include <tests/support/scripted_daemon.hpp>
#include <tests/support/temp_dir.hpp>

using namespace jitcache;
using namespace std::chrono_literals;
namespace transport = client::transport;
using testing::answer;
using testing::read_request;
using testing::Request;
using testing::ScriptedDaemon;
using testing::Step;

namespace {

Step answer_ok(proto::Payload payload = {}) {
  return [payload](int fd) {
    Request request;
    if (read_request(fd, request)) answer(fd, request, proto::Status::ok, payload);
  };
}
Step answer_unavailable() {
  return [](int fd) {
    Request request;
    if (read_request(fd, request)) {
      answer(fd, request, proto::Status::unavailable, proto::encode_error_message("jitcached is shutting down"));
    }
  };
}
Step close_after_reading() {  // reads the whole request, then closes: the reply is lost
  return [](int fd) {
    Request request;
    read_request(fd, request);
  };
}

proto::Payload remove_reply(std::uint32_t removed) {
  proto::Payload payload(4);
  for (std::size_t i = 0; i < 4; ++i) payload[i] = static_cast<std::uint8_t>(removed >> (8 * i));
  return payload;
}

}  // namespace

TEST_CASE("daemon client: a request answered unavailable is sent again on a fresh connection") {
  testing::TempDir dir;
  ScriptedDaemon daemon(dir.file("jitcached.sock"), {answer_unavailable(), answer_ok()});
  auto client = transport::DaemonClient::connect(daemon.options());
  REQUIRE(client);
  CHECK(client->ping());
  CHECK(daemon.accepted() == 2);
}

TEST_CASE("daemon client: a PING whose connection closes before the reply is sent again once, and only once") {
  testing::TempDir dir;
  SECTION("the second connection answers") {
    ScriptedDaemon daemon(dir.file("jitcached.sock"), {close_after_reading(), answer_ok()});
    auto client = transport::DaemonClient::connect(daemon.options());
    REQUIRE(client);
    CHECK(client->ping());
    CHECK(daemon.accepted() == 2);
  }
  SECTION("the second connection is lost too: the caller gets the error") {
    ScriptedDaemon daemon(dir.file("jitcached.sock"), {close_after_reading(), close_after_reading(), answer_ok()});
    auto client = transport::DaemonClient::connect(daemon.options());
    REQUIRE(client);
    auto pong = client->ping();
    REQUIRE_FALSE(pong);
    CHECK(pong.error().code == common::ErrorCode::unavailable);
    CHECK(pong.error().reply_status == 0);
    CHECK(daemon.accepted() == 2);
  }
}

TEST_CASE("daemon client: a REMOVE whose reply is lost is not sent again (the daemon may have removed)") {
  testing::TempDir dir;
  ScriptedDaemon daemon(dir.file("jitcached.sock"), {close_after_reading(), answer_ok(remove_reply(1))});
  auto client = transport::DaemonClient::connect(daemon.options());
  REQUIRE(client);
  auto removed = client->remove("0123456789abcdef");
  REQUIRE_FALSE(removed);
  CHECK(removed.error().code == common::ErrorCode::unavailable);
  std::this_thread::sleep_for(50ms);
  CHECK(daemon.accepted() == 1);
}

TEST_CASE("daemon client: a REMOVE on a connection the daemon had already closed is sent on a fresh one") {
  testing::TempDir dir;
  std::promise<void> closed;
  auto closed_future = closed.get_future();
  // The first connection is shut before anything is sent on it (a drain closing an idle
  // connection): the REMOVE cannot be sent, so the daemon cannot have run it.
  ScriptedDaemon daemon(dir.file("jitcached.sock"), {[&closed](int fd) {
                                                       ::shutdown(fd, SHUT_RDWR);
                                                       closed.set_value();
                                                     },
                                                     answer_ok(remove_reply(1))});
  auto client = transport::DaemonClient::connect(daemon.options());
  REQUIRE(client);
  REQUIRE(closed_future.wait_for(5s) == std::future_status::ready);
  auto removed = client->remove("0123456789abcdef");
  REQUIRE(removed);
  CHECK(removed->removed == 1);
  CHECK(daemon.accepted() == 2);
}

TEST_CASE("daemon client: which requests are sent again after a lost reply") {
  using proto::Op;
  for (Op op : {Op::hello, Op::ping, Op::lookup, Op::put, Op::stats, Op::list, Op::compile, Op::report_failure,
                Op::remote_check, Op::explain, Op::misses}) {
    INFO(proto::op_name(op));
    CHECK(transport::repeatable_after_loss(op));
  }
  for (Op op : {Op::remove, Op::gc, Op::verify, Op::hit_note}) {
    INFO(proto::op_name(op));
    CHECK_FALSE(transport::repeatable_after_loss(op));
  }
}

TEST_CASE("daemon client: with restart_wait, a connect waits for a missing socket, then reaches it") {
  testing::TempDir dir;
  transport::ConnectOptions options;
  options.socket_path = dir.file("jitcached.sock");
  options.io_timeout = 5s;
  SECTION("without restart_wait a missing socket fails at once") {
    auto client = transport::DaemonClient::connect(options);
    REQUIRE_FALSE(client);
    CHECK(client.error().code == common::ErrorCode::unavailable);
  }
  SECTION("with it, a daemon that binds the socket 200 ms later is reached") {
    options.restart_wait = 5s;
    auto connecting = std::async(std::launch::async, [&] { return transport::DaemonClient::connect(options); });
    std::this_thread::sleep_for(200ms);
    CHECK(connecting.wait_for(0ms) == std::future_status::timeout);  // still waiting
    ScriptedDaemon daemon(options.socket_path, {answer_ok()});
    auto client = connecting.get();
    REQUIRE(client);
    CHECK(client->ping());
  }
}
