// The real jitcached on a temp socket and state dir: persistence across restarts, single instance,
// stale sockets after a crash, draining on SIGTERM, and start-up refusals.
#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/stat.h>

#include <thread>

#include <tests/support/daemon_process.hpp>
#include <tests/support/daemon_stats.hpp>
#include <tests/support/sample_entries.hpp>
#include <tests/support/temp_dir.hpp>

using namespace jitcache;
using testing::DaemonProcess;
using testing::stat_value;
using testing::TempDir;

TEST_CASE("daemon: an image put before a restart comes back byte-identical after it") {
  TempDir dir;
  DaemonProcess daemon(dir);
  daemon.start();
  const auto image = testing::sample_image(1, 1677722);
  {
    auto client = daemon.client();
    auto put = client.put(testing::sample_put(1, image));
    REQUIRE(put);
    CHECK_FALSE(put->replaced);
  }
  REQUIRE(daemon.stop() == 0);

  daemon.start();
  auto client = daemon.client();
  auto found = client.lookup(testing::sample_key(1));
  REQUIRE(found);
  REQUIRE(found->has_value());
  CHECK((*found)->image == image);
  CHECK((*found)->info.key == testing::sample_key(1));
  CHECK((*found)->info.compile_time_us == 1234);
  CHECK(stat_value(client, "entries") == 1);
  CHECK(stat_value(client, "bytes_raw") == image.size());
}

TEST_CASE("daemon: a lookup of a key never put is a miss and is counted") {
  TempDir dir;
  DaemonProcess daemon(dir);
  daemon.start();
  auto client = daemon.client();
  auto found = client.lookup(testing::sample_key(99));
  REQUIRE(found);
  CHECK_FALSE(found->has_value());
  CHECK(stat_value(client, "misses") == 1);
  CHECK(stat_value(client, "hits") == 0);
}

TEST_CASE("daemon: a second daemon on the same socket and state dir refuses to start and says why") {
  TempDir dir;
  DaemonProcess first(dir);
  first.start();
  DaemonProcess second(dir);
  auto result = second.run_to_exit({"--foreground", "--socket", first.socket_path(), "--state-dir", first.state_dir()},
                                   std::chrono::seconds(20));
  CHECK(result.status == 1);
  CHECK_THAT(result.output, Catch::Contains("another jitcached (pid " + std::to_string(first.pid()) + ")"));
  auto client = first.client();
  CHECK(client.ping());
}

TEST_CASE("daemon: a daemon killed with SIGKILL leaves no stale socket trouble for the next start") {
  TempDir dir;
  DaemonProcess daemon(dir);
  daemon.start();
  const auto image = testing::sample_image(2, 4096);
  REQUIRE(daemon.client().put(testing::sample_put(2, image)));
  daemon.kill_hard();
  struct stat st {};
  REQUIRE(::stat(daemon.socket_path().c_str(), &st) == 0);  // the crashed daemon's socket file is still there

  daemon.start();
  auto found = daemon.client().lookup(testing::sample_key(2));
  REQUIRE(found);
  REQUIRE(found->has_value());
  CHECK((*found)->image == image);
}

TEST_CASE("daemon: SIGTERM lets an in-flight request finish, then exits 0") {
  TempDir dir;
  DaemonProcess daemon(dir);
  daemon.start();
  auto client = daemon.client();
  const auto image = testing::sample_image(3, 8 << 20);
  const auto request = testing::sample_put(3, image);

  // Send the header and half the payload, signal the daemon, then send the rest: the request was
  // in flight when the drain began, so it must still be answered.
  const proto::Payload head = proto::encode_put_request_head(request);
  const proto::Payload trailer = proto::encode_put_request_trailer(request);  // content_fast
  proto::FrameHeader header;
  header.op = proto::Op::put;
  header.request_id = 7;
  header.payload_length = head.size() + image.size() + trailer.size();
  const auto raw_header = proto::encode_header(header);
  auto& connection = client.connection();
  REQUIRE(connection.send_raw(proto::Bytes(raw_header)));
  REQUIRE(connection.send_raw(proto::Bytes(head)));
  REQUIRE(connection.send_raw(proto::Bytes(image).first(image.size() / 2)));
  // The request counts as in flight once the daemon has accepted its connection and started on the
  // frame; on a loaded machine that can take longer than a fixed pause, so wait until a second
  // connection's STATS shows both connections, then give the reader a moment.
  {
    auto observer = daemon.client();
    for (int i = 0; i < 500 && stat_value(observer, "connections") < 2; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  ::kill(daemon.pid(), SIGTERM);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  REQUIRE(connection.send_raw(proto::Bytes(image).subspan(image.size() / 2)));
  REQUIRE(connection.send_raw(proto::Bytes(trailer)));
  auto reply = connection.read_reply();
  REQUIRE(reply);
  CHECK(reply->header.status == proto::Status::ok);
  CHECK(reply->header.request_id == 7);
  CHECK(connection.wait_for_close());
  CHECK(daemon.stop() == 0);

  daemon.start();
  auto found = daemon.client().lookup(testing::sample_key(3));
  REQUIRE(found);
  CHECK(found->has_value());
}

TEST_CASE("daemon: SIGTERM closes idle connections at once and exits 0 well before the drain timeout") {
  TempDir dir;
  DaemonProcess daemon(dir, {{"--drain-timeout", "30s"}, {}, "warn"});
  daemon.start();
  auto idle = daemon.client();
  REQUIRE(idle.ping());
  const auto started = std::chrono::steady_clock::now();
  CHECK(daemon.stop() == 0);
  CHECK(std::chrono::steady_clock::now() - started < std::chrono::seconds(5));
  CHECK(idle.connection().wait_for_close());
}

TEST_CASE("daemon: a config file with an unknown key is refused with its file and line") {
  TempDir dir;
  testing::write_file(dir.file("jitcached.toml"), "log_level = \"info\"\n\nsockt = \"/tmp/x.sock\"\n");
  DaemonProcess daemon(dir);
  auto result = daemon.run_to_exit({"--foreground", "--config", dir.file("jitcached.toml"), "--socket",
                                    daemon.socket_path(), "--state-dir", daemon.state_dir()},
                                   std::chrono::seconds(20));
  CHECK(result.status == 2);
  CHECK_THAT(result.output, Catch::Contains(dir.file("jitcached.toml") + ":3") && Catch::Contains("sockt"));
}

TEST_CASE("daemon: settings come from the config file, then JITCACHE_* variables, then flags") {
  TempDir dir;
  testing::write_file(dir.file("jitcached.toml"), "max_connections = 1\nidle_timeout = \"1s\"\n");
  // The file says 1 connection; the environment raises it to 3; the file's idle timeout stays.
  DaemonProcess daemon(dir, {{"--config", dir.file("jitcached.toml")}, {{"JITCACHE_MAX_CONNECTIONS", "3"}}, "warn"});
  daemon.start();
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // let start()'s probe connection close
  auto a = daemon.client();
  auto b = daemon.client();
  auto c = daemon.client();
  CHECK(a.ping());
  CHECK(b.ping());
  CHECK(c.ping());
  auto refused = daemon.client();  // the fourth is told why before it is closed
  auto reply = refused.connection().read_reply();
  REQUIRE(reply);
  CHECK(reply->header.status == proto::Status::busy);
  CHECK_THAT(*proto::decode_error_message(proto::Bytes(reply->payload)), Catch::Contains("max_connections"));
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));  // idle_timeout from the file
  CHECK(a.connection().wait_for_close());
}

TEST_CASE("daemon: without --foreground it detaches only once it is ready, and reports start-up errors") {
  TempDir dir;
  DaemonProcess daemon(dir);
  auto started = daemon.run_to_exit({"--socket", daemon.socket_path(), "--state-dir", daemon.state_dir()},
                                    std::chrono::seconds(20));
  REQUIRE(started.status == 0);
  auto client = daemon.client();  // ready: no retry needed
  REQUIRE(client.ping());

  auto second = daemon.run_to_exit({"--socket", daemon.socket_path(), "--state-dir", daemon.state_dir()},
                                   std::chrono::seconds(20));
  CHECK(second.status == 1);
  CHECK_THAT(second.output, Catch::Contains("another jitcached"));

  // Stop the detached daemon through its pid in the lock file.
  const std::string pid_text = testing::read_file(daemon.state_dir() + "/jitcached.lock");
  const pid_t pid = static_cast<pid_t>(std::stol(pid_text));
  REQUIRE(pid > 1);
  ::kill(pid, SIGTERM);
  CHECK(client.connection().wait_for_close());
}
