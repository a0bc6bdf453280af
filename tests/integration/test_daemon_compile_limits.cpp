// COMPILE's limits (docs/compile-service.md "Limits"): a PTX over compile_max_ptx is too_large; one
// uid beyond compile_queue_per_uid or compile_bytes_per_uid is busy while another uid's compile gets
// through and a join needs no place; and requests that wait for their compile hold no copy of their
// source (the daemon's VmRSS from /proc). The real daemon with the fault worker
// (tests/fakes/fault_compile_worker.cpp), whose "hang" mode holds a compile until its wall time.
#include <catch2/catch.hpp>

#include <sys/stat.h>

#include <chrono>
#include <cstdio>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <proto/compile_messages.hpp>
#include <proto/jit_options.hpp>

#include <tests/support/daemon_process.hpp>
#include <tests/support/daemon_stats.hpp>
#include <tests/support/process_status.hpp>
#include <tests/support/system_users.hpp>
#include <tests/support/temp_dir.hpp>
#include <tests/support/test_skip.hpp>

using namespace jitcache;
using namespace std::chrono_literals;
using client::transport::CompileAnswer;
using client::transport::DaemonClient;
using client::transport::UnixConnection;
using testing::DaemonOptions;
using testing::DaemonProcess;
using testing::TempDir;
using Kind = CompileAnswer::Kind;

namespace {

constexpr std::uint64_t k_mib = 1ull << 20;

DaemonOptions fault_worker_daemon(std::vector<std::string> extra) {
  DaemonOptions options;
  options.extra_args = {"--compile-worker", JITCACHE_FAULT_WORKER_PATH, "--compile-failure-ttl", "0"};
  options.extra_args.insert(options.extra_args.end(), extra.begin(), extra.end());
  options.extra_env = {{"FAULT_WORKER_VERSION", "13.0"}};
  return options;
}

// The fault worker's `mode`, padded to `size` bytes; distinct `n` make distinct keys (options).
struct CompileText {
  std::string ptx;
  proto::CompileRequest request;
};
CompileText compile_text(const std::string& mode, int n, std::size_t size = 0) {
  CompileText text;
  text.ptx = mode + "\n";
  if (text.ptx.size() < size) text.ptx.resize(size, ' ');
  auto options = proto::canonicalize_option_text("maxrreg=" + std::to_string(32 + n));
  REQUIRE(options);
  text.request.arch = "sm_90";
  text.request.driver_api = 13000;
  text.request.driver_build = "580.159.04";
  text.request.options = *options;
  text.request.ptx = proto::as_bytes(text.ptx);
  return text;
}

// Sends a COMPILE and leaves its reply unread: the request waits in the daemon.
UnixConnection send_compile(const DaemonProcess& daemon, const proto::CompileRequest& request) {
  auto connection = UnixConnection::connect(daemon.connect_options());
  REQUIRE(connection);
  const proto::Payload payload = proto::encode(request);
  proto::FrameHeader header;
  header.op = proto::Op::compile;
  header.request_id = 1;
  header.payload_length = payload.size();
  const auto raw = proto::encode_header(header);
  REQUIRE(connection->send_raw(proto::Bytes(raw)));
  REQUIRE(connection->send_raw(proto::Bytes(payload)));
  return std::move(*connection);
}

std::uint64_t stat(const DaemonProcess& daemon, const std::string& name) {
  auto client = daemon.client();
  return testing::stat_value(client, name);
}

bool wait_for_stat(const DaemonProcess& daemon, const std::string& name, std::uint64_t value) {
  const auto deadline = std::chrono::steady_clock::now() + 20s;
  while (std::chrono::steady_clock::now() < deadline) {
    if (stat(daemon, name) >= value) return true;
    std::this_thread::sleep_for(10ms);
  }
  return false;
}

CompileAnswer compile(DaemonClient& client, const proto::CompileRequest& request) {
  auto answer = client.compile(request, 60s);
  REQUIRE(answer);
  return std::move(*answer);
}

}  // namespace

TEST_CASE("compile limits: a PTX over compile_max_ptx is too_large, one within it compiles") {
  TempDir dir;
  DaemonProcess daemon(dir, fault_worker_daemon({"--compile-max-ptx", "1MiB"}));
  daemon.start();
  auto client = daemon.client();
  const auto over = compile_text("ok", 0, 2 * k_mib);
  auto refused = client.compile(over.request, 30s);
  REQUIRE_FALSE(refused);
  CHECK(refused.error().reply_status == static_cast<std::uint16_t>(proto::Status::too_large));
  CHECK_THAT(refused.error().message, Catch::Contains("compile_max_ptx"));
  CHECK(stat(daemon, "errors.too_large") == 1);
  CHECK(stat(daemon, "compiles") == 0);
  const auto within = compile_text("ok", 1, k_mib - 1000);
  CHECK(compile(client, within.request).kind == Kind::compiled);
  CHECK(daemon.running());
}

TEST_CASE("compile limits: a uid beyond compile_queue_per_uid is busy, a join is not, and another uid gets through") {
  testing::SystemUsers users;
  if (!users.available()) {
    JITCACHE_SKIP(users.why());
  }
  TempDir dir("jitcache-compile-limits");
  ::chmod(dir.path().c_str(), 0755);
  auto options = fault_worker_daemon({"--compile-jobs", "2", "--compile-queue-per-uid", "2", "--compile-wall-time",
                                      "2s", "--socket-group", users.group_name()});
  DaemonProcess daemon(dir, options);
  daemon.start();

  // Root (this test) takes both of its places with compiles that hang until their wall time: one
  // runs, one waits, as one uid runs at most compile_jobs - 1 at once.
  const auto first = compile_text("hang", 0);
  const auto second = compile_text("hang", 1);
  auto held_first = send_compile(daemon, first.request);
  auto held_second = send_compile(daemon, second.request);
  REQUIRE(wait_for_stat(daemon, "compile_running", 1));
  REQUIRE(wait_for_stat(daemon, "compile_queue_length", 1));
  auto root = daemon.client();
  const CompileAnswer busy = compile(root, compile_text("hang", 2).request);
  CHECK(busy.kind == Kind::busy);
  CHECK_THAT(busy.message, Catch::Contains("uid 0 has 2 compiles") && Catch::Contains("compile_queue_per_uid"));
  CHECK(stat(daemon, "compile_busy_per_uid") == 1);
  auto joined = send_compile(daemon, second.request);  // the same key: a join takes no place
  REQUIRE(wait_for_stat(daemon, "single_flight_joins", 1));
  CHECK(stat(daemon, "compile_busy") == 1);

  // Another uid has places of its own: its compile takes the slot kept for others, and compiles.
  const auto other = compile_text("ok", 3);
  CHECK(testing::as_user(users.a(), {users.group()}, [&] {
          auto client = DaemonClient::connect(daemon.connect_options());
          if (!client) return 1;
          auto answer = client->compile(other.request, 30s);
          if (!answer || answer->kind != Kind::compiled) {
            const std::string why = answer ? answer->message : answer.error().message;
            std::fprintf(stderr, "A's compile: %s\n", why.c_str());
            return 2;
          }
          return 0;
        }) == 0);
  CHECK(stat(daemon, "compile_busy") == 1);
  for (auto* held : {&held_first, &held_second, &joined}) {
    auto reply = held->read_reply(std::chrono::steady_clock::now() + 20s);
    REQUIRE(reply);
    CHECK(reply->header.status == proto::Status::worker_failed);  // the hang ended at its wall time
  }
}

TEST_CASE("compile limits: one uid's queue of long compiles makes another uid's compile wait for none of them") {
  testing::SystemUsers users;
  if (!users.available()) {
    JITCACHE_SKIP(users.why());
  }
  TempDir dir("jitcache-compile-turns");
  ::chmod(dir.path().c_str(), 0755);
  DaemonProcess daemon(dir, fault_worker_daemon({"--compile-jobs", "2", "--compile-wall-time", "4s", "--socket-group",
                                                 users.group_name()}));
  daemon.start();
  // B queues four compiles that each hang until the 4 s wall time, within every per-uid limit, and
  // leaves: its compiles run on (a client that leaves cancels nothing).
  REQUIRE(testing::as_user(users.b(), {users.group()}, [&] {
            std::vector<UnixConnection> sent;
            for (int i = 0; i < 4; ++i) sent.push_back(send_compile(daemon, compile_text("hang", i).request));
            return wait_for_stat(daemon, "compile_running", 1) ? 0 : 1;
          }) == 0);
  REQUIRE(wait_for_stat(daemon, "compile_queue_length", 3));
  CHECK(stat(daemon, "compile_running") == 1);  // B's share: compile_jobs - 1

  // A's small compile starts at once in the slot kept for other uids: first come, first served, it
  // waited for B's first two to time out and then for two more (about 8 s).
  CHECK(testing::as_user(users.a(), {users.group()}, [&] {
          auto client = DaemonClient::connect(daemon.connect_options());
          if (!client) return 1;
          const auto start = std::chrono::steady_clock::now();
          auto answer = client->compile(compile_text("ok", 9).request, 30s);
          const auto waited = std::chrono::steady_clock::now() - start;
          std::fprintf(stderr, "A's compile answered after %lld ms\n",
                       static_cast<long long>(std::chrono::duration_cast<std::chrono::milliseconds>(waited).count()));
          if (!answer || answer->kind != Kind::compiled) return 2;
          return waited < 2s ? 0 : 3;
        }) == 0);
  daemon.kill_hard();
}

TEST_CASE("compile limits: waiting compiles hold their PTX once, joins none, and compile_bytes_per_uid bounds it") {
  TempDir dir;
  DaemonProcess daemon(dir, fault_worker_daemon({"--compile-jobs", "1", "--worker-threads", "1", "--compile-wall-time",
                                                 "60s", "--compile-bytes-per-uid", "64MiB"}));
  daemon.start();
  const std::uint64_t rss_before = testing::status_bytes(daemon.pid(), "VmRSS");
  constexpr std::size_t k_ptx = 16 * k_mib;

  // Four compiles of 16 MiB fill root's 64 MiB: one runs, three wait; a fifth is busy.
  std::vector<CompileText> texts;
  std::vector<UnixConnection> waiting;
  for (int i = 0; i < 4; ++i) {
    texts.push_back(compile_text("hang", i, k_ptx));
    waiting.push_back(send_compile(daemon, texts.back().request));
    REQUIRE(wait_for_stat(daemon, i == 0 ? "compile_running" : "compile_queue_length", i == 0 ? 1 : i));
  }
  auto root = daemon.client();
  const CompileAnswer busy = compile(root, compile_text("hang", 4, k_ptx).request);
  CHECK(busy.kind == Kind::busy);
  CHECK_THAT(busy.message, Catch::Contains("compile_bytes_per_uid"));
  // Eight more requests join a waiting compile: they need neither a place nor a copy.
  for (int i = 0; i < 8; ++i) {
    waiting.push_back(send_compile(daemon, texts[1].request));
    REQUIRE(wait_for_stat(daemon, "single_flight_joins", static_cast<std::uint64_t>(i + 1)));
  }
  CHECK(stat(daemon, "compile_busy_per_uid") == 1);

  // What they hold: the four jobs' PTX, the running job's copy on its way to the worker, and
  // buffers the allocator keeps for reuse (139 MiB in all on the dev VM), not a copy per waiting
  // request besides: those alone were 13 copies of 16 MiB.
  const std::uint64_t rss = testing::status_bytes(daemon.pid(), "VmRSS");
  INFO("VmRSS " << rss_before / k_mib << " -> " << rss / k_mib << " MiB");
  CHECK(rss < rss_before + 13 * k_ptx);
  daemon.kill_hard();  // ends the waits (a hang lasts its 60 s wall time)
}
