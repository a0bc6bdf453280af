// The COMPILE op (PROTOCOL.md §5 COMPILE) against the real jitcached on a temp socket with the real
// jitcache-compile worker (nvJitLink, no GPU): images of the key's arch, stored in the shared
// namespace and found again by key and by fast key, single flight across concurrent clients, a client
// that leaves mid-compile, compile errors remembered for the TTL, refusals, malformed requests, a
// full queue and a crashing worker (tests/fakes/fault_compile_worker), and the stats that move.
#include <catch2/catch.hpp>

#include <elf.h>

#include <cstring>
#include <latch>
#include <string>
#include <thread>
#include <vector>

#include <proto/compile_messages.hpp>
#include <proto/content_digest.hpp>
#include <proto/jit_options.hpp>

#include <tests/support/daemon_process.hpp>
#include <tests/support/daemon_stats.hpp>
#include <tests/support/temp_dir.hpp>

using namespace jitcache;
using namespace std::chrono_literals;
using client::transport::CompileAnswer;
using client::transport::DaemonClient;
using testing::DaemonProcess;
using testing::TempDir;
using Kind = CompileAnswer::Kind;

namespace {

std::string corpus(const std::string& name) {
  return testing::read_file(std::string(JITCACHE_TEST_DATA_DIR) + "/" + name);
}

std::string with_target(std::string ptx, const std::string& target) {
  const auto at = ptx.find(".target sm_90");
  REQUIRE(at != std::string::npos);
  return ptx.replace(at, std::strlen(".target sm_90"), ".target " + target);
}

proto::CompileRequest request_for(const std::string& ptx, const std::string& arch, const std::string& option_text = "",
                                  std::uint32_t driver_api = 13000) {
  auto options = proto::canonicalize_option_text(option_text);
  REQUIRE(options);
  proto::CompileRequest request;
  request.arch = arch;
  request.driver_api = driver_api;
  request.driver_build = "580.159.04";
  request.options = *options;
  request.ptx = proto::as_bytes(ptx);
  return request;
}

proto::KeyFields key_for(const proto::CompileRequest& request) {
  return proto::key_of(request, proto::content_digest(request.ptx));
}

CompileAnswer compile(DaemonClient& client, const proto::CompileRequest& request) {
  auto answer = client.compile(request, 60s);
  INFO((answer ? std::string(client::transport::compile_answer_name(answer->kind)) + ": " + answer->message
               : answer.error().message));
  REQUIRE(answer);
  return std::move(*answer);
}

// The SM number of a cubin (e_flags bits 8-15; docs/driver-facts.md §3) and whether its tkinfo records the
// arch, which is where sm_90a differs from sm_90.
unsigned cubin_sm(const client::transport::ByteBuffer& image) {
  REQUIRE(image.size() >= sizeof(Elf64_Ehdr));
  Elf64_Ehdr header;
  std::memcpy(&header, image.data(), sizeof header);
  REQUIRE(std::memcmp(header.e_ident, ELFMAG, SELFMAG) == 0);
  CHECK(header.e_machine == 190);  // EM_CUDA
  return (header.e_flags >> 8) & 0xFF;
}
bool records_arch(const client::transport::ByteBuffer& image, const std::string& arch) {
  const std::string text(image.begin(), image.end());
  return text.find("-arch " + arch + " ") != std::string::npos ||
         text.find("-arch " + arch + '\0') != std::string::npos;
}

std::uint64_t stat(DaemonProcess& daemon, const std::string& name) {
  auto client = daemon.client();
  return testing::stat_value(client, name);
}

// Polls a stat until it reaches `value` (the daemon's work runs on its own threads).
bool wait_for_stat(DaemonProcess& daemon, const std::string& name, std::uint64_t value,
                   std::chrono::milliseconds timeout = 20s) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (stat(daemon, name) >= value) return true;
    std::this_thread::sleep_for(10ms);
  }
  return false;
}

}  // namespace

TEST_CASE("compile op: a daemon with a working worker announces capability bit 1, compile = false does not") {
  TempDir dir;
  DaemonProcess daemon(dir);
  daemon.start();
  auto client = daemon.client();
  auto hello = client.hello("test");
  REQUIRE(hello);
  CHECK((hello->capabilities & proto::k_capability_compile) != 0);

  TempDir off_dir;
  DaemonProcess off(off_dir, {{}, {{"JITCACHE_COMPILE", "false"}}});
  off.start();
  auto off_client = off.client();
  auto off_hello = off_client.hello("test");
  REQUIRE(off_hello);
  CHECK((off_hello->capabilities & proto::k_capability_compile) == 0);
  auto refused = off_client.compile(request_for(corpus("small_kernel.ptx"), "sm_90"), 10s);
  REQUIRE_FALSE(refused);
  CHECK(refused.error().reply_status == static_cast<std::uint16_t>(proto::Status::bad_request));
  CHECK_THAT(refused.error().message, Catch::Contains("not implemented"));
  CHECK(stat(off, "compiles") == 0);
}

TEST_CASE("compile op: corpus PTX compiles to a cubin of the key's arch, stored shared, then served from the store") {
  TempDir dir;
  // No re-JIT: the sm_90a COMPILE below is a new arch, whose re-JIT batch would compile the sm_90
  // entry for it too and make the counts below depend on its timing (test_daemon_rejit tests that).
  testing::DaemonOptions options;
  options.extra_args = {"--rejit-budget", "0"};
  DaemonProcess daemon(dir, options);
  daemon.start();
  auto client = daemon.client();
  const std::string ptx = corpus("small_kernel.ptx");
  const std::string ptx_90a = with_target(ptx, "sm_90a");

  const auto request = request_for(ptx, "sm_90");
  const CompileAnswer sm90 = compile(client, request);
  REQUIRE(sm90.kind == Kind::compiled);
  CHECK_FALSE(sm90.from_store);
  const auto& info = sm90.image->info;
  CHECK(cubin_sm(sm90.image->image) == 90);
  CHECK(records_arch(sm90.image->image, "sm_90"));
  CHECK(info.key == key_for(request));  // the daemon's own digest of the bytes it received
  CHECK(info.key_id == proto::key_id(key_for(request)));
  CHECK(info.namespace_id == 0);
  CHECK(info.producer == "nvJitLink 13.0");
  CHECK(info.compile_time_us > 0);

  const CompileAnswer sm90a = compile(client, request_for(ptx_90a, "sm_90a"));
  REQUIRE(sm90a.kind == Kind::compiled);
  CHECK(cubin_sm(sm90a.image->image) == 90);
  CHECK(records_arch(sm90a.image->image, "sm_90a"));
  CHECK(stat(daemon, "compiles") == 2);
  CHECK(stat(daemon, "compile_stored") == 2);
  CHECK(stat(daemon, "compile_microseconds") > 0);

  // Stored: a LOOKUP by key and by fast key finds the same bytes, and a second COMPILE compiles nothing.
  auto by_key = client.lookup(key_for(request));
  REQUIRE(by_key);
  REQUIRE(by_key->has_value());
  CHECK((*by_key)->image == sm90.image->image);
  auto by_fast_key = client.lookup_fast(proto::fast_key_of(key_for(request), proto::xxh3_128(proto::as_bytes(ptx))));
  REQUIRE(by_fast_key);
  CHECK(by_fast_key->has_value());
  const CompileAnswer again = compile(client, request);
  REQUIRE(again.kind == Kind::compiled);
  CHECK(again.from_store);
  CHECK(again.image->image == sm90.image->image);
  CHECK(stat(daemon, "compiles") == 2);
  CHECK(stat(daemon, "compile_store_hits") == 1);
  CHECK(stat(daemon, "compile_requests") == 3);
  // Every hit adds the entry's compile time to what the cache saved: the LOOKUPs and the COMPILE.
  CHECK(stat(daemon, "compile_microseconds_saved") == 3 * info.compile_time_us);
}

TEST_CASE("compile op: 32 concurrent clients compiling one key share one compile and get identical bytes") {
  TempDir dir;
  DaemonProcess daemon(dir);
  daemon.start();
  const std::string ptx = corpus("mid_kernels.ptx");
  const auto request = request_for(ptx, "sm_90a");
  constexpr int k_clients = 32;
  std::vector<std::vector<std::uint8_t>> images(k_clients);
  std::vector<std::string> errors(k_clients);
  std::latch start(k_clients);
  std::vector<std::thread> threads;
  for (int i = 0; i < k_clients; ++i) {
    threads.emplace_back([&, i] {
      auto client = DaemonClient::connect(daemon.connect_options());
      start.arrive_and_wait();
      if (!client) return void(errors[i] = client.error().message);
      auto answer = client->compile(request, 60s);
      if (!answer) return void(errors[i] = answer.error().message);
      if (answer->kind != Kind::compiled) return void(errors[i] = answer->message);
      images[i].assign(answer->image->image.begin(), answer->image->image.end());
    });
  }
  for (auto& t : threads) t.join();
  for (int i = 0; i < k_clients; ++i) {
    INFO("client " << i << ": " << errors[i]);
    CHECK(errors[i].empty());
    CHECK(!images[i].empty());
    CHECK(images[i] == images[0]);
  }
  CHECK(stat(daemon, "compiles") == 1);
  CHECK(stat(daemon, "single_flight_joins") >= 1);
  CHECK(stat(daemon, "single_flight_joins") + stat(daemon, "compile_store_hits") == k_clients - 1);
  CHECK(stat(daemon, "compile_stored") == 1);
}

TEST_CASE("compile op: a client that disconnects mid-compile stops neither the others nor the store write") {
  TempDir dir;
  // No re-JIT, whose batch for the new arch sm_90a would compile the same key beside the leaver's.
  testing::DaemonOptions options;
  options.extra_args = {"--rejit-budget", "0"};
  DaemonProcess daemon(dir, options);
  daemon.start();
  const std::string ptx = corpus("mid_kernels.ptx");
  const auto request = request_for(ptx, "sm_90");
  {
    auto leaver = daemon.client();
    proto::FrameHeader header;
    header.op = proto::Op::compile;
    header.request_id = 1;
    const proto::Payload payload = proto::encode(request);
    header.payload_length = payload.size();
    const auto raw = proto::encode_header(header);
    REQUIRE(leaver.connection().send_raw(proto::Bytes(raw)));
    REQUIRE(leaver.connection().send_raw(proto::Bytes(payload)));
    REQUIRE(wait_for_stat(daemon, "compile_running", 1));
  }  // gone while its compile runs
  auto stayer = daemon.client();
  const CompileAnswer answer = compile(stayer, request);
  REQUIRE(answer.kind == Kind::compiled);
  CHECK_FALSE(answer.from_store);  // it joined the leaver's compile, which was not cancelled
  CHECK(stat(daemon, "single_flight_joins") == 1);
  CHECK(stat(daemon, "compiles") == 1);
  CHECK(stat(daemon, "compile_stored") == 1);
  auto found = stayer.lookup(key_for(request));
  REQUIRE(found);
  CHECK(found->has_value());

  // The last waiter leaving does not stop the store write either.
  const auto other = request_for(ptx, "sm_90a");
  {
    auto leaver = daemon.client();
    proto::FrameHeader header;
    header.op = proto::Op::compile;
    header.request_id = 2;
    const proto::Payload payload = proto::encode(other);
    header.payload_length = payload.size();
    const auto raw = proto::encode_header(header);
    REQUIRE(leaver.connection().send_raw(proto::Bytes(raw)));
    REQUIRE(leaver.connection().send_raw(proto::Bytes(payload)));
    REQUIRE(wait_for_stat(daemon, "compile_running", 1));
  }
  REQUIRE(wait_for_stat(daemon, "compile_stored", 2));
  auto client = daemon.client();
  auto stored = client.lookup(key_for(other));
  REQUIRE(stored);
  CHECK(stored->has_value());
  CHECK(stat(daemon, "compiles") == 2);
}

TEST_CASE("compile op: garbage PTX is a compile error with the compiler's log, remembered for the TTL") {
  TempDir dir;
  DaemonProcess daemon(dir, {{"--compile-failure-ttl", "1m"}, {}, "warn"});
  daemon.start();
  auto client = daemon.client();
  const std::string garbage = ".version 9.0\n.target sm_90\n.address_size 64\nthis is not ptx;\n";
  const CompileAnswer first = compile(client, request_for(garbage, "sm_90"));
  REQUIRE(first.kind == Kind::compile_error);
  CHECK_THAT(first.log, Catch::Contains("ptxas") || Catch::Contains("error"));
  CHECK_THAT(first.message, Catch::Contains("nvJitLink 13.0"));
  const CompileAnswer second = compile(client, request_for(garbage, "sm_90"));
  REQUIRE(second.kind == Kind::compile_error);
  CHECK(second.log == first.log);
  CHECK_THAT(second.message, Catch::Contains("remembered"));
  CHECK(stat(daemon, "compiles") == 1);
  CHECK(stat(daemon, "compile_failures") == 1);
  CHECK(stat(daemon, "compile_negative_hits") == 1);
  CHECK(stat(daemon, "compile_stored") == 0);
  CHECK(stat(daemon, "errors.compile_error") == 2);
  auto missing = client.lookup(key_for(request_for(garbage, "sm_90")));
  REQUIRE(missing);
  CHECK_FALSE(missing->has_value());
}

TEST_CASE("compile op: an option without an nvJitLink equivalent and a driver older than the toolkit are refused") {
  TempDir dir;
  DaemonProcess daemon(dir);
  daemon.start();
  auto client = daemon.client();
  const std::string ptx = corpus("small_kernel.ptx");
  const CompileAnswer option = compile(client, request_for(ptx, "sm_90", "tpb=128"));
  REQUIRE(option.kind == Kind::cannot_compile);
  CHECK_THAT(option.message, Catch::StartsWith("option: ") && Catch::Contains("tpb"));
  const CompileAnswer old_driver = compile(client, request_for(ptx, "sm_90", "", 12080));
  REQUIRE(old_driver.kind == Kind::cannot_compile);
  CHECK_THAT(old_driver.message, Catch::StartsWith("driver_too_old: "));
  CHECK(stat(daemon, "compile_refused") == 2);
  CHECK(stat(daemon, "compiles") == 0);
  CHECK(stat(daemon, "errors.cannot_compile") == 2);
}

TEST_CASE("compile op: malformed requests are bad requests and the connection stays usable") {
  TempDir dir;
  DaemonProcess daemon(dir);
  daemon.start();
  auto client = daemon.client();
  const std::string ptx = corpus("small_kernel.ptx");
  auto expect_bad = [&](const proto::CompileRequest& request, const std::string& words) {
    auto answer = client.compile(request, 10s);
    REQUIRE_FALSE(answer);
    CHECK(answer.error().reply_status == static_cast<std::uint16_t>(proto::Status::bad_request));
    CHECK_THAT(answer.error().message, Catch::Contains(words));
    CHECK(client.ping());
  };
  expect_bad(request_for("", "sm_90"), "empty PTX");
  const std::string with_nul = ptx + std::string(1, '\0') + "tail";
  expect_bad(request_for(with_nul, "sm_90"), "NUL byte at offset " + std::to_string(ptx.size()));
  auto bad_arch = request_for(ptx, "sm_90");
  bad_arch.arch = "compute_90";
  expect_bad(bad_arch, "arch");
  auto bad_options = request_for(ptx, "sm_90");
  bad_options.options = "opt=4;opt=4";
  expect_bad(bad_options, "options");

  proto::Payload payload = proto::encode(request_for(ptx, "sm_90"));
  const std::size_t priority_at = payload.size() - ptx.size() - 4 - 1;
  payload[priority_at] = 7;
  proto::FrameHeader header;
  header.op = proto::Op::compile;
  header.request_id = 9;
  header.payload_length = payload.size();
  const auto raw = proto::encode_header(header);
  REQUIRE(client.connection().send_raw(proto::Bytes(raw)));
  REQUIRE(client.connection().send_raw(proto::Bytes(payload)));
  auto reply = client.connection().read_reply();
  REQUIRE(reply);
  CHECK(reply->header.status == proto::Status::bad_request);
  CHECK(client.ping());
  CHECK(stat(daemon, "compiles") == 0);
  CHECK(stat(daemon, "compile_requests") == 0);
}

TEST_CASE("compile op: a full queue answers busy, a crashing worker answers worker_failed and the daemon serves on") {
  TempDir dir;
  DaemonProcess daemon(dir, {{"--compile-worker", JITCACHE_FAULT_WORKER_PATH, "--compile-jobs", "1", "--compile-queue",
                              "1", "--compile-wall-time", "1500ms", "--compile-failure-ttl", "0"},
                             {{"FAULT_WORKER_VERSION", "13.0"}},
                             "warn"});
  daemon.start();
  // The fault worker's mode is the PTX text; distinct options make distinct keys.
  auto hang = [](int n) { return request_for("hang", "sm_90", "maxrreg=" + std::to_string(32 + n)); };
  const std::string hang_text = "hang";
  std::vector<std::thread> threads;
  std::vector<CompileAnswer> answers(2);
  for (int i = 0; i < 2; ++i) {
    threads.emplace_back([&, i] {
      auto client = daemon.client();
      auto answer = client.compile(hang(i), 30s);
      if (answer) answers[i] = std::move(*answer);
    });
    REQUIRE(wait_for_stat(daemon, i == 0 ? "compile_running" : "compile_queue_length", 1));
  }
  auto client = daemon.client();
  const CompileAnswer busy = compile(client, hang(2));
  CHECK(busy.kind == Kind::busy);
  CHECK_THAT(busy.message, Catch::Contains("queue is full"));
  CHECK(stat(daemon, "compile_busy") == 1);
  for (auto& t : threads) t.join();
  for (const auto& answer : answers) {
    CHECK(answer.kind == Kind::worker_failed);
    CHECK_THAT(answer.message, Catch::StartsWith("wall_time: "));
  }

  const CompileAnswer crashed = compile(client, request_for("crash", "sm_90"));
  CHECK(crashed.kind == Kind::worker_failed);
  CHECK_THAT(crashed.message, Catch::StartsWith("crashed: "));
  CHECK(client.ping());
  CHECK(daemon.running());
  CHECK(stat(daemon, "compiles") == 3);
  CHECK(stat(daemon, "compile_failures") == 3);
  CHECK(stat(daemon, "errors.worker_failed") == 3);
  // Serving goes on: the next compile (a worker that answers) is stored.
  const CompileAnswer ok = compile(client, request_for("ok", "sm_90"));
  CHECK(ok.kind == Kind::compiled);
  CHECK(stat(daemon, "compile_stored") == 1);
}
