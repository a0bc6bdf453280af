// libjitcache's load flow (docs/client-guide.md §4) against the real daemon on a temp socket, with
// the fake driver (tests/fakes) in place of libcuda: every branch — miss, hit, failed load → report
// → rebuild, daemon down, hung or answering garbage, a corrupt stored image, options the cache does
// not understand, JIT failures, fat binaries and cubins — is checked by its outcome, by what the
// daemon counted and by what the "driver" was asked to do.
#include <catch2/catch.hpp>

#include <jitcache/jitcache.h>

#include <dlfcn.h>
#include <sqlite3.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include <proto/digest.hpp>
#include <proto/messages.hpp>
#include <proto/wire.hpp>

#include <tests/support/daemon_process.hpp>
#include <tests/support/daemon_stats.hpp>
#include <tests/support/fake_driver.hpp>
#include <tests/support/load_flow_fixture.hpp>
#include <tests/support/store_plant.hpp>
#include <tests/support/temp_dir.hpp>
#include <tests/support/test_skip.hpp>

using namespace jitcache;
using namespace jitcache::testing::load_flow;
using testing::DaemonProcess;
using testing::FakeDriver;
using testing::TempDir;

namespace {

// A Unix socket that listens at `path` and is never served by a daemon (hung or garbage peers).
int listen_unix(const std::string& path) {
  int listener = ::socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, path.c_str(), sizeof(addr.sun_path) - 1);
  REQUIRE(::bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0);
  REQUIRE(::listen(listener, 16) == 0);
  return listener;
}

std::vector<char> read_fixture(const std::string& name) {
  const std::string dir = JITCACHE_FATBIN_FIXTURE_DIR;
  std::ifstream in(dir + "/" + name + ".fatbin", std::ios::binary);
  REQUIRE(in.good());
  return std::vector<char>((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

}  // namespace

TEST_CASE("load flow: a miss compiles locally and stores, the next load is a hit that skips the JIT") {
  LiveDaemon live;
  fake().reset_counters();

  CHECK(load_expecting(small_ptx().c_str(), CUDA_SUCCESS) == JITCACHE_OUTCOME_COMPILED_LOCALLY);
  const auto first = last_info();
  CHECK(std::string(first.arch) == "sm_90a");
  CHECK(std::strlen(first.key_id) == 64);
  CHECK(first.ns_compile > 0);
  CHECK(first.ns_put > 0);
  CHECK(fake().counters().link_compiles == 1);
  CHECK(stat_value(live.daemon, "puts") == 1);

  char info_log[256] = {};
  char error_log[256] = "stale";
  float wall_ms = 0;
  CUjit_option options[] = {CU_JIT_INFO_LOG_BUFFER,  CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES,
                            CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
                            CU_JIT_WALL_TIME,        CU_JIT_LOG_VERBOSE};
  void* values[] = {info_log,  reinterpret_cast<void*>(sizeof(info_log)),
                    error_log, reinterpret_cast<void*>(sizeof(error_log)),
                    nullptr,   reinterpret_cast<void*>(1)};
  CHECK(load_expecting(small_ptx().c_str(), CUDA_SUCCESS, 6, options, values) == JITCACHE_OUTCOME_HIT);
  CHECK(std::string(last_info().key_id) == first.key_id);
  CHECK(fake().counters().link_compiles == 1);  // no second JIT
  CHECK(fake().counters().ptx_jit_compiles == 0);
  CHECK_THAT(std::string(info_log), Catch::Contains("from the cache"));
  CHECK(std::string(error_log).empty());
  std::memcpy(&wall_ms, &values[4], sizeof(wall_ms));
  CHECK(wall_ms > 0.0f);
  CHECK(stat_value(live.daemon, "hits") == 1);
  // Found by the fast key (the PUT carried it), the content digest checked after: one round trip.
  CHECK(stat_value(live.daemon, "fast_key_hits") == 1);
  CHECK(stat_value(live.daemon, "misses") == 1);  // the first load's, counted once
  CHECK(counters().hits == 1);
  CHECK(counters().compiled_locally == 1);
  CHECK(counters().fast_key_mismatches == 0);
  // One LOOKUP per load, the miss's included: a fast-key miss at a daemon with fast keys is final.
  CHECK(counters().lookups == 2);
  CHECK(stat_value(live.daemon, "fast_key_lookups") == 2);
}

TEST_CASE("load flow: a large module's hit is handed over as a sealed descriptor and loads") {
  LiveDaemon live;
  const std::string mid = read_text(std::string(JITCACHE_TEST_DATA_DIR) + "/mid_kernels.ptx");
  REQUIRE(mid.size() >= 256 * 1024);
  CHECK(load_expecting(mid.c_str(), CUDA_SUCCESS) == JITCACHE_OUTCOME_COMPILED_LOCALLY);
  CHECK(load_expecting(mid.c_str(), CUDA_SUCCESS) == JITCACHE_OUTCOME_HIT);
  CHECK(stat_value(live.daemon, "images_by_descriptor") == 1);
  // A small module's hit stays on bytes: no HELLO, no descriptor.
  CHECK(load_expecting(small_ptx().c_str(), CUDA_SUCCESS) == JITCACHE_OUTCOME_COMPILED_LOCALLY);
  CHECK(load_expecting(small_ptx().c_str(), CUDA_SUCCESS) == JITCACHE_OUTCOME_HIT);
  CHECK(stat_value(live.daemon, "images_by_descriptor") == 1);
}

TEST_CASE("load flow: an entry found by the fast key whose content digest is another PTX's is never loaded") {
  LiveDaemon live;
  fake().reset_counters();
  CHECK(load_expecting(small_ptx().c_str(), CUDA_SUCCESS) == JITCACHE_OUTCOME_COMPILED_LOCALLY);
  const std::string first_key = last_info().key_id;

  // Another PTX, and the first PTX's entry rewritten to carry the new PTX's fast key: what an XXH3
  // collision (or a lying writer) would leave in the store.
  const std::string other_ptx = small_ptx() + "\n// another source, the same kernels\n";
  {
    auto client = live.daemon.client();
    auto entry = client.lookup_by_id(first_key);
    REQUIRE(entry.ok());
    REQUIRE(entry->has_value());
    proto::PutRequest put;
    put.key = (*entry)->info.key;
    put.producer = "test: a fast key that belongs to another source";
    put.image = proto::Bytes((*entry)->image.data(), (*entry)->image.size());
    put.content_fast = proto::xxh3_128(proto::as_bytes(other_ptx));
    REQUIRE(client.put(put).ok());
  }

  CHECK(load_expecting(other_ptx.c_str(), CUDA_SUCCESS) == JITCACHE_OUTCOME_COMPILED_LOCALLY);
  CHECK(std::string(last_info().key_id) != first_key);
  CHECK(counters().fast_key_mismatches == 1);
  CHECK(fake().counters().link_compiles == 2);           // compiled from its own source, not served the other's image
  CHECK(stat_value(live.daemon, "fast_key_hits") == 1);  // the daemon offered it; the client refused it

  // Its own entry now carries the same fast key and is newer: offered first, and a hit.
  CHECK(load_expecting(other_ptx.c_str(), CUDA_SUCCESS) == JITCACHE_OUTCOME_HIT);
  CHECK(counters().fast_key_mismatches == 1);
  // The first PTX's entry lost its own fast key to the rewrite, and a fast-key miss is final: it is
  // compiled again, and its PUT gives the entry its fast key back.
  CHECK(load_expecting(small_ptx().c_str(), CUDA_SUCCESS) == JITCACHE_OUTCOME_COMPILED_LOCALLY);
  CHECK(std::string(last_info().key_id) == first_key);
  CHECK(load_expecting(small_ptx().c_str(), CUDA_SUCCESS) == JITCACHE_OUTCOME_HIT);
  CHECK(load_expecting(other_ptx.c_str(), CUDA_SUCCESS) == JITCACHE_OUTCOME_HIT);
}

TEST_CASE("load flow: a daemon that does not know fast keys is asked by key, and its PUTs carry none") {
  // Rationale: the flow asks by fast key before it knows the capabilities (HELLO would cost every
  // fresh connection's hit a round trip); the refusal makes it ask HELLO, whose bits decide.
  fake().clear_failures();
  fake().set_device(90, 13000);
  TempDir dir;
  const std::string socket_path = dir.file("older.sock");
  const int listener = listen_unix(socket_path);
  // An older jitcached: HELLO without capability bit 5, LOOKUP selector 2 a bad request, selector 0
  // a miss, PUT stored.
  std::vector<std::uint8_t> lookup_selectors;
  std::vector<std::size_t> put_trailers;
  std::thread server([&] {
    int peer = ::accept(listener, nullptr, nullptr);
    if (peer < 0) return;
    for (;;) {
      proto::HeaderBytes raw{};
      if (::recv(peer, raw.data(), raw.size(), MSG_WAITALL) != static_cast<ssize_t>(raw.size())) break;
      proto::FrameHeader header;
      if (proto::check_request_header(raw, proto::k_default_max_frame_bytes, header)) break;
      std::vector<std::uint8_t> payload(header.payload_length);
      if (!payload.empty() &&
          ::recv(peer, payload.data(), payload.size(), MSG_WAITALL) != static_cast<ssize_t>(payload.size())) {
        break;
      }
      proto::Status status = proto::Status::ok;
      proto::Payload body;
      if (header.op == proto::Op::lookup) {
        lookup_selectors.push_back(payload.at(0));
        status = payload.at(0) == 2 ? proto::Status::bad_request : proto::Status::not_found;
        body = proto::encode_error_message(status == proto::Status::bad_request ? "LOOKUP selector 2 is unknown"
                                                                                : "no entry for this key");
      } else if (header.op == proto::Op::hello) {
        proto::HelloReply hello;
        hello.capabilities = proto::k_capability_store | proto::k_capability_report_failure;
        hello.daemon_version = "0.0.9";
        hello.max_frame_bytes = proto::k_default_max_frame_bytes;
        body = proto::encode(hello);
      } else if (header.op == proto::Op::put) {
        auto put = proto::decode_put_request(proto::Bytes(payload));
        put_trailers.push_back(put.ok() && put->content_fast ? 16 : 0);
        body = proto::encode(proto::PutReply{proto::key_id(put->key), 0, false});
      } else {
        status = proto::Status::bad_request;
        body = proto::encode_error_message("not expected here");
      }
      const auto frame = proto::encode_frame(header.op, status, header.request_id, body);
      if (::send(peer, frame.data(), frame.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(frame.size())) break;
    }
    ::close(peer);
  });
  use_socket(socket_path, 2000);
  CHECK(load_expecting(small_ptx().c_str(), CUDA_SUCCESS) == JITCACHE_OUTCOME_COMPILED_LOCALLY);
  CHECK(counters().daemon_unavailable == 0);
  CHECK(counters().puts == 1);
  CHECK(counters().lookups == 2);
  // The pooled connection knows the capabilities now: the next load asks by key, once.
  CHECK(load_expecting(small_ptx().c_str(), CUDA_SUCCESS) == JITCACHE_OUTCOME_COMPILED_LOCALLY);
  CHECK(counters().lookups == 3);
  use_socket(dir.file("nobody.sock"));  // closes the pooled connection, so the server thread ends
  server.join();
  ::close(listener);
  CHECK(lookup_selectors == std::vector<std::uint8_t>{2, 0, 0});
  CHECK(put_trailers == std::vector<std::size_t>{0, 0});
}

TEST_CASE("load flow: options that change code are a different key, log options are not") {
  LiveDaemon live;
  CHECK(load_expecting(small_ptx().c_str(), CUDA_SUCCESS) == JITCACHE_OUTCOME_COMPILED_LOCALLY);
  const std::string plain_key = last_info().key_id;

  CUjit_option o3[] = {CU_JIT_OPTIMIZATION_LEVEL};
  void* o3_values[] = {reinterpret_cast<void*>(3)};
  CHECK(load_expecting(small_ptx().c_str(), CUDA_SUCCESS, 1, o3, o3_values) == JITCACHE_OUTCOME_COMPILED_LOCALLY);
  CHECK(std::string(last_info().key_id) != plain_key);

  // The default level passed explicitly is the same key as passing nothing.
  CUjit_option o4[] = {CU_JIT_OPTIMIZATION_LEVEL};
  void* o4_values[] = {reinterpret_cast<void*>(4)};
  CHECK(load_expecting(small_ptx().c_str(), CUDA_SUCCESS, 1, o4, o4_values) == JITCACHE_OUTCOME_HIT);
  CHECK(std::string(last_info().key_id) == plain_key);
}

TEST_CASE("load flow: a hit that fails to load is reported, quarantined and rebuilt") {
  LiveDaemon live;
  CHECK(load_expecting(small_ptx().c_str(), CUDA_SUCCESS) == JITCACHE_OUTCOME_COMPILED_LOCALLY);

  REQUIRE(fake().set_failure("load_cubin", CUDA_ERROR_INVALID_IMAGE, 1) == 0);
  CHECK(load_expecting(small_ptx().c_str(), CUDA_SUCCESS) == JITCACHE_OUTCOME_REBUILT_AFTER_FAILED_LOAD);
  const auto info = last_info();
  CHECK(info.stage == JITCACHE_STAGE_LOAD);
  CHECK(info.stage_result == CUDA_ERROR_INVALID_IMAGE);
  CHECK(std::string(info.result_name) == "CUDA_ERROR_INVALID_IMAGE");
  CHECK(info.ns_report > 0);
  CHECK(stat_value(live.daemon, "failure_reports") == 1);
  CHECK(counters().failure_reports == 1);
  CHECK(counters().rebuilt_after_failed_load == 1);

  // The rebuilt image replaced the quarantined entry: the next load is a clean hit.
  CHECK(load_expecting(small_ptx().c_str(), CUDA_SUCCESS) == JITCACHE_OUTCOME_HIT);
}

TEST_CASE("load flow: a cubin for another GPU stored under this key fails with 209, is reported and rebuilt") {
  LiveDaemon live;
  // A cubin compiled for CC 10.0, fetched from the store by its key id...
  REQUIRE(fake().set_device(100, 0) == 0);
  CHECK(load_expecting(small_ptx().c_str(), CUDA_SUCCESS) == JITCACHE_OUTCOME_COMPILED_LOCALLY);
  const std::string sm100_id = last_info().key_id;
  REQUIRE(fake().set_device(90, 0) == 0);
  CHECK(load_expecting(small_ptx().c_str(), CUDA_SUCCESS) == JITCACHE_OUTCOME_COMPILED_LOCALLY);
  const std::string sm90_id = last_info().key_id;

  // ...is stored under the CC 9.0 key (a valid checksum: only the driver can tell it is wrong).
  auto client = live.daemon.client();
  auto sm100 = client.lookup_by_id(sm100_id);
  auto sm90 = client.lookup_by_id(sm90_id);
  REQUIRE(sm100);
  REQUIRE(sm90);
  REQUIRE(sm100->has_value());
  REQUIRE(sm90->has_value());
  proto::PutRequest plant;
  plant.key = (*sm90)->info.key;
  plant.producer = "test: wrong arch";
  plant.image = proto::Bytes((*sm100)->image);
  // The daemon refuses such a PUT (docs/entry-format.md "What a PUT may store"), so it is written
  // into the file from outside, as an older jitcached, which stored any bytes, could have.
  auto refused = client.put(plant);
  REQUIRE_FALSE(refused);
  CHECK(refused.error().reply_status == static_cast<std::uint16_t>(proto::Status::bad_request));
  testing::plant_image(live.daemon.state_dir() + "/jitcache.db", sm90_id, (*sm100)->bytes());

  CHECK(load_expecting(small_ptx().c_str(), CUDA_SUCCESS) == JITCACHE_OUTCOME_REBUILT_AFTER_FAILED_LOAD);
  CHECK(last_info().stage == JITCACHE_STAGE_IMAGE);
  CHECK(last_info().stage_result == CUDA_ERROR_NO_BINARY_FOR_GPU);
  CHECK(stat_value(live.daemon, "failure_reports") == 1);
  CHECK(load_expecting(small_ptx().c_str(), CUDA_SUCCESS) == JITCACHE_OUTCOME_HIT);
}

TEST_CASE("load flow: a resource error loading a hit is returned unchanged, without a report") {
  LiveDaemon live;
  CHECK(load_expecting(small_ptx().c_str(), CUDA_SUCCESS) == JITCACHE_OUTCOME_COMPILED_LOCALLY);
  REQUIRE(fake().set_failure("load_cubin", CUDA_ERROR_OUT_OF_MEMORY, 1) == 0);
  CHECK(load_expecting(small_ptx().c_str(), CUDA_ERROR_OUT_OF_MEMORY) == JITCACHE_OUTCOME_HIT);
  CHECK(last_info().stage == JITCACHE_STAGE_LOAD);
  CHECK(stat_value(live.daemon, "failure_reports") == 0);
  CHECK(load_expecting(small_ptx().c_str(), CUDA_SUCCESS) == JITCACHE_OUTCOME_HIT);
}

TEST_CASE("load flow: a corrupt image in the store is a miss for the client, and is rebuilt") {
  LiveDaemon live;
  CHECK(load_expecting(small_ptx().c_str(), CUDA_SUCCESS) == JITCACHE_OUTCOME_COMPILED_LOCALLY);

  sqlite3* db = nullptr;
  const std::string path = live.daemon.state_dir() + "/jitcache.db";
  REQUIRE(std::filesystem::exists(path));
  REQUIRE(sqlite3_open(path.c_str(), &db) == SQLITE_OK);
  sqlite3_busy_timeout(db, 5000);
  // Replace every stored image with random bytes of the same size: the entry's checksum no longer matches.
  const char* corrupt = "UPDATE blobs SET data = randomblob(length(data))";
  char* error = nullptr;
  INFO((error ? error : ""));
  REQUIRE(sqlite3_exec(db, corrupt, nullptr, nullptr, &error) == SQLITE_OK);
  sqlite3_close(db);

  CHECK(load_expecting(small_ptx().c_str(), CUDA_SUCCESS) == JITCACHE_OUTCOME_COMPILED_LOCALLY);
  CHECK(stat_value(live.daemon, "corrupt_entries") >= 1);
  CHECK(load_expecting(small_ptx().c_str(), CUDA_SUCCESS) == JITCACHE_OUTCOME_HIT);
}

TEST_CASE("load flow: after a daemon restart the next load is a hit on a new connection, not a fallback") {
  LiveDaemon live;
  fake().reset_counters();
  CHECK(load_expecting(small_ptx().c_str(), CUDA_SUCCESS) == JITCACHE_OUTCOME_COMPILED_LOCALLY);
  // The library keeps that load's connection for the next one; the restart closes it.
  REQUIRE(live.daemon.stop() == 0);
  live.daemon.start();
  CHECK(load_expecting(small_ptx().c_str(), CUDA_SUCCESS) == JITCACHE_OUTCOME_HIT);
  CHECK(counters().daemon_unavailable == 0);
  CHECK(counters().uncached_fallbacks == 0);
  CHECK(fake().counters().link_compiles == 1);
}

TEST_CASE("load flow: with no daemon the load falls back to the driver at once, and warns once") {
  fake().clear_failures();
  TempDir dir;
  use_socket(dir.file("nobody-listens.sock"));
  fake().reset_counters();
  CHECK(load_expecting(small_ptx().c_str(), CUDA_SUCCESS) == JITCACHE_OUTCOME_UNCACHED_FALLBACK);
  const auto info = last_info();
  CHECK_THAT(std::string(info.reason), Catch::Contains("nobody-listens.sock"));
  CHECK(std::strlen(info.key_id) == 64);           // the entry it would have used, for troubleshooting
  CHECK(fake().counters().ptx_jit_compiles == 1);  // the driver's own JIT did the work
  // Rationale: a dead socket is refused at once; a bound this loose only catches a real wait.
  CHECK(info.ns_total < 2'000'000'000ull);
  CHECK(load_expecting(small_ptx().c_str(), CUDA_SUCCESS) == JITCACHE_OUTCOME_UNCACHED_FALLBACK);
  CHECK(counters().daemon_unavailable == 2);
  CHECK(counters().uncached_fallbacks == 2);
}

TEST_CASE("load flow: a hung daemon costs one bounded wait, then is skipped") {
  fake().clear_failures();
  TempDir dir;
  const std::string socket_path = dir.file("hung.sock");
  // Listens but never accepts: connect succeeds (backlog), no reply ever comes.
  const int listener = listen_unix(socket_path);
  use_socket(socket_path, 300);

  const auto start = std::chrono::steady_clock::now();
  CHECK(load_expecting(small_ptx().c_str(), CUDA_SUCCESS) == JITCACHE_OUTCOME_UNCACHED_FALLBACK);
  const auto first = std::chrono::steady_clock::now() - start;
  CHECK_THAT(std::string(last_info().reason), Catch::Contains("timed out"));
  CHECK(first >= std::chrono::milliseconds(300));
  CHECK(first < std::chrono::seconds(5));

  // In back-off: the next load does not wait again.
  CHECK(load_expecting(small_ptx().c_str(), CUDA_SUCCESS) == JITCACHE_OUTCOME_UNCACHED_FALLBACK);
  CHECK(last_info().ns_total < 300'000'000ull);
  CHECK_THAT(std::string(last_info().reason), Catch::Contains("moments ago"));
  ::close(listener);
}

TEST_CASE("load flow: a daemon answering garbage is a fallback, not a failure") {
  fake().clear_failures();
  TempDir dir;
  const std::string socket_path = dir.file("garbage.sock");
  const int listener = listen_unix(socket_path);
  std::atomic<bool> done{false};
  std::thread server([&] {
    while (!done) {
      int peer = ::accept(listener, nullptr, nullptr);
      if (peer < 0) break;
      const char garbage[] = "HTTP/1.1 400 Bad Request\r\nContent-Length: 1000000000000\r\n\r\n....";
      [[maybe_unused]] auto n = ::write(peer, garbage, sizeof(garbage));
      ::close(peer);
    }
  });
  use_socket(socket_path, 1000);
  CHECK(load_expecting(small_ptx().c_str(), CUDA_SUCCESS) == JITCACHE_OUTCOME_UNCACHED_FALLBACK);
  CHECK(counters().daemon_unavailable == 1);
  done = true;
  ::shutdown(listener, SHUT_RDWR);
  ::close(listener);
  server.join();
}

TEST_CASE("load flow: an option the cache does not understand makes the load uncached, not wrong") {
  LiveDaemon live;
  char* names[] = {const_cast<char*>("symbol")};
  void* addresses[] = {nullptr};
  CUjit_option options[] = {CU_JIT_GLOBAL_SYMBOL_NAMES, CU_JIT_GLOBAL_SYMBOL_ADDRESSES, CU_JIT_GLOBAL_SYMBOL_COUNT};
  void* values[] = {names, addresses, reinterpret_cast<void*>(1)};
  CHECK(load_expecting(small_ptx().c_str(), CUDA_SUCCESS, 3, options, values) == JITCACHE_OUTCOME_UNCACHED_FALLBACK);
  CHECK_THAT(std::string(last_info().reason), Catch::Contains("uncacheable"));
  CHECK_THAT(std::string(last_info().reason), Catch::Contains("CU_JIT_GLOBAL_SYMBOL"));
  CHECK(stat_value(live.daemon, "puts") == 0);

  CUjit_option unknown[] = {static_cast<CUjit_option>(999)};
  void* unknown_values[] = {nullptr};
  CUmodule module = nullptr;
  CUresult result = jitcache_module_load_data_ex(&module, small_ptx().c_str(), 1, unknown, unknown_values);
  CHECK(last_info().outcome == JITCACHE_OUTCOME_UNCACHED_FALLBACK);
  if (result == CUDA_SUCCESS) jitcache_module_unload(module);
}

TEST_CASE("load flow: PTX that does not compile returns the driver's error with the compiler's log") {
  LiveDaemon live;
  const std::string bad =
      ".version 9.0\n.target sm_90\n.address_size 64\n.visible .entry broken() { this is not ptx }\n";
  char error_log[4096] = {};
  CUjit_option options[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void* values[] = {error_log, reinterpret_cast<void*>(sizeof(error_log))};
  CHECK(load_expecting(bad.c_str(), CUDA_ERROR_INVALID_PTX, 2, options, values) == JITCACHE_OUTCOME_UNCACHED_FALLBACK);
  const auto info = last_info();
  CHECK(info.stage == JITCACHE_STAGE_JIT);
  CHECK(std::string(info.result_name) == "CUDA_ERROR_INVALID_PTX");
  CHECK_THAT(std::string(info.reason), Catch::Contains("CUDA_ERROR_INVALID_PTX (218)"));
  CHECK(std::strlen(error_log) > 0);
  CHECK(stat_value(live.daemon, "puts") == 0);
}

TEST_CASE("load flow: PTX newer than the driver gives the driver's 222 at the PTX version stage") {
  LiveDaemon live;
  std::string newer = small_ptx();
  newer.replace(newer.find(".version 9.0"), 12, ".version 9.9");
  CHECK(load_expecting(newer.c_str(), CUDA_ERROR_UNSUPPORTED_PTX_VERSION) == JITCACHE_OUTCOME_UNCACHED_FALLBACK);
  CHECK(last_info().stage == JITCACHE_STAGE_PTX_VERSION);
}

TEST_CASE("load flow: when this environment cannot JIT, the driver's own load decides") {
  LiveDaemon live;
  REQUIRE(fake().set_failure("link_create", CUDA_ERROR_JIT_COMPILATION_DISABLED, 1) == 0);
  CHECK(load_expecting(small_ptx().c_str(), CUDA_SUCCESS) == JITCACHE_OUTCOME_UNCACHED_FALLBACK);
  CHECK_THAT(std::string(last_info().reason), Catch::Contains("CUDA_ERROR_JIT_COMPILATION_DISABLED"));

  REQUIRE(fake().set_failure("link_create", CUDA_ERROR_JIT_COMPILER_NOT_FOUND, 1) == 0);
  REQUIRE(fake().set_failure("load_ptx", CUDA_ERROR_JIT_COMPILER_NOT_FOUND, 1) == 0);
  CHECK(load_expecting(small_ptx().c_str(), CUDA_ERROR_JIT_COMPILER_NOT_FOUND) == JITCACHE_OUTCOME_UNCACHED_FALLBACK);
}

TEST_CASE("load flow: caching disabled by configuration never contacts the daemon") {
  LiveDaemon live;
  jitcache_config config{};
  config.struct_size = sizeof(config);
  config.socket_path = live.daemon.socket_path().c_str();
  config.disable = 1;
  REQUIRE(jitcache_configure(&config) == 0);
  CHECK(load_expecting(small_ptx().c_str(), CUDA_SUCCESS) == JITCACHE_OUTCOME_UNCACHED_FALLBACK);
  CHECK_THAT(std::string(last_info().reason), Catch::Contains("disabled"));
  CHECK(stat_value(live.daemon, "misses") == 0);
}

TEST_CASE(
    "load flow: cubins and fat binaries with a cubin for the device pass through, PTX-only fat binaries are cached") {
  LiveDaemon live;
  CHECK(load_expecting(small_ptx().c_str(), CUDA_SUCCESS) == JITCACHE_OUTCOME_COMPILED_LOCALLY);
  auto client = live.daemon.client();
  auto cubin = client.lookup_by_id(last_info().key_id);
  REQUIRE(cubin);
  REQUIRE(cubin->has_value());
  CHECK(load_expecting((*cubin)->image.data(), CUDA_SUCCESS) == JITCACHE_OUTCOME_PASS_THROUGH);

  if (std::string(JITCACHE_FATBIN_FIXTURE_DIR).empty()) {
    JITCACHE_SKIP("no nvcc at build time, so no fat binary fixtures");
  }
  auto with_cubin = read_fixture("sm90_compute90_zstd");
  CHECK(load_expecting(with_cubin.data(), CUDA_SUCCESS) == JITCACHE_OUTCOME_PASS_THROUGH);

  auto ptx_only = read_fixture("compute90");
  CHECK(load_expecting(ptx_only.data(), CUDA_SUCCESS) == JITCACHE_OUTCOME_COMPILED_LOCALLY);
  CHECK(load_expecting(ptx_only.data(), CUDA_SUCCESS) == JITCACHE_OUTCOME_HIT);

  // Embedded ptxas options (-O2, line info) are applied and keyed: another key than without them.
  const std::string plain_key = last_info().key_id;
  auto with_options = read_fixture("compute90_options");
  CHECK(load_expecting(with_options.data(), CUDA_SUCCESS) == JITCACHE_OUTCOME_COMPILED_LOCALLY);
  CHECK(std::string(last_info().key_id) != plain_key);

  auto no_image = read_fixture("sm80");
  REQUIRE(fake().set_device(90, 0) == 0);
  CHECK(load_expecting(no_image.data(), CUDA_ERROR_NO_BINARY_FOR_GPU) == JITCACHE_OUTCOME_PASS_THROUGH);
  CHECK(last_info().stage == JITCACHE_STAGE_IMAGE);
}

TEST_CASE("load flow: many threads loading at once all get a working module") {
  LiveDaemon live;
  std::atomic<int> ok{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 5; ++i) {
        CUmodule module = nullptr;
        if (jitcache_module_load_data(&module, small_ptx().c_str()) == CUDA_SUCCESS && module != nullptr) {
          jitcache_module_unload(module);
          ++ok;
        }
      }
    });
  }
  for (auto& thread : threads) thread.join();
  CHECK(ok == 40);
  const auto c = counters();
  CHECK(c.loads == 40);
  CHECK(c.hits + c.compiled_locally == 40);
  CHECK(c.hits >= 32);
}

TEST_CASE("load flow: jitcache_module_load reads a file, and a missing file is CUDA_ERROR_FILE_NOT_FOUND") {
  LiveDaemon live;
  CUmodule module = nullptr;
  CHECK(jitcache_module_load(&module, (std::string(JITCACHE_TEST_DATA_DIR) + "/small_kernel.ptx").c_str()) ==
        CUDA_SUCCESS);
  CHECK(last_info().outcome == JITCACHE_OUTCOME_COMPILED_LOCALLY);
  CHECK(jitcache_module_unload(module) == CUDA_SUCCESS);
  CHECK(jitcache_module_load(&module, "/nonexistent/kernel.ptx") == CUDA_ERROR_FILE_NOT_FOUND);
  CHECK_THAT(std::string(last_info().reason), Catch::Contains("/nonexistent/kernel.ptx"));
}

TEST_CASE("load flow: the first load records the library's set-up apart, and a 0.1.0-sized info stops at ns_total") {
  LiveDaemon live;
  CUmodule module = nullptr;
  REQUIRE(jitcache_module_load_data(&module, small_ptx().c_str()) == CUDA_SUCCESS);
  jitcache_module_unload(module);
  const jitcache_load_info first = last_info();
  CHECK(first.ns_setup > 0);  // this process opens the driver in its first load
  CHECK(first.ns_setup < first.ns_total);
  REQUIRE(jitcache_module_load_data(&module, small_ptx().c_str()) == CUDA_SUCCESS);
  jitcache_module_unload(module);
  CHECK(last_info().ns_setup < first.ns_setup);  // the driver stays open

  // A caller built against 0.1.0 passes a struct that ends at ns_total: nothing after it is written.
  unsigned char buffer[sizeof(jitcache_load_info)];
  std::memset(buffer, 0xAB, sizeof(buffer));
  const std::size_t old_size = offsetof(jitcache_load_info, ns_total) + sizeof(uint64_t);
  auto* old_info = reinterpret_cast<jitcache_load_info*>(buffer);
  old_info->struct_size = old_size;
  REQUIRE(jitcache_last_load_info(old_info) == 0);
  CHECK(old_info->struct_size == old_size);
  CHECK(old_info->ns_total > 0);
  for (std::size_t i = old_size; i < sizeof(buffer); ++i) CHECK(buffer[i] == 0xAB);
}

TEST_CASE("load flow: invalid arguments get the driver's own answer") {
  LiveDaemon live;
  void* fake_handle = ::dlopen(FakeDriver::path().c_str(), RTLD_NOW | RTLD_LOCAL);
  REQUIRE(fake_handle != nullptr);
  auto driver_load_ex = reinterpret_cast<decltype(&cuModuleLoadDataEx)>(::dlsym(fake_handle, "cuModuleLoadDataEx"));
  REQUIRE(driver_load_ex != nullptr);

  CHECK(jitcache_module_load_data(nullptr, small_ptx().c_str()) ==
        driver_load_ex(nullptr, small_ptx().c_str(), 0, nullptr, nullptr));
  CUmodule module = nullptr;
  CUmodule direct = nullptr;
  const CUresult expected = driver_load_ex(&direct, small_ptx().c_str(), 2, nullptr, nullptr);
  if (expected == CUDA_SUCCESS) jitcache_module_unload(direct);
  const CUresult got = jitcache_module_load_data_ex(&module, small_ptx().c_str(), 2, nullptr, nullptr);
  CHECK(got == expected);
  if (got == CUDA_SUCCESS) jitcache_module_unload(module);
  CHECK(last_info().outcome == JITCACHE_OUTCOME_PASS_THROUGH);

  jitcache_load_info too_small{};
  too_small.struct_size = 8;
  CHECK(jitcache_last_load_info(&too_small) == -1);
  CHECK(jitcache_last_load_info(nullptr) == -1);
}

// ---- The daemon compiles misses (COMPILE, capability bit 1)

namespace {

std::string corpus_ptx(const std::string& name) { return read_text(std::string(JITCACHE_TEST_DATA_DIR) + "/" + name); }

bool wait_for_stat(DaemonProcess& daemon, const std::string& name, std::uint64_t value) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (std::chrono::steady_clock::now() < deadline) {
    if (stat_value(daemon, name) >= value) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

}  // namespace

TEST_CASE("load flow: a miss is compiled by the daemon and loaded, the next load is a hit") {
  LiveDaemon live(true);
  fake().reset_counters();
  char info_log[256] = {};
  CUjit_option options[] = {CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES, CU_JIT_LOG_VERBOSE};
  void* values[] = {info_log, reinterpret_cast<void*>(sizeof(info_log)), reinterpret_cast<void*>(1)};
  CHECK(load_expecting(small_ptx().c_str(), CUDA_SUCCESS, 3, options, values) == JITCACHE_OUTCOME_COMPILED_BY_DAEMON);
  const auto first = last_info();
  CHECK(std::string(first.arch) == "sm_90a");
  CHECK(first.ns_compile > 0);
  CHECK_THAT(std::string(first.reason), Catch::Contains("compiled by jitcached") && Catch::Contains("nvJitLink"));
  CHECK_THAT(std::string(info_log), Catch::Contains("compiled by jitcached"));
  CHECK(fake().counters().link_compiles == 0);  // no JIT in this process
  CHECK(fake().counters().ptx_jit_compiles == 0);
  CHECK(fake().counters().cubin_loads_ok == 1);
  CHECK(stat_value(live.daemon, "compiles") == 1);
  CHECK(stat_value(live.daemon, "puts") == 0);
  CHECK(counters().compiled_by_daemon == 1);

  CHECK(load_expecting(small_ptx().c_str(), CUDA_SUCCESS) == JITCACHE_OUTCOME_HIT);
  CHECK(std::string(last_info().key_id) == first.key_id);
  CHECK(stat_value(live.daemon, "fast_key_hits") == 1);  // stored with its fast key
  CHECK(stat_value(live.daemon, "compiles") == 1);
  CHECK(stat_value(live.daemon, "compile_microseconds_saved") > 0);
  CHECK(counters().hits == 1);
  CHECK(counters().lookups == 2);  // one per load: the miss went from its LOOKUP to COMPILE
}

TEST_CASE("load flow: an option the daemon cannot compile faithfully is compiled locally and stored") {
  LiveDaemon live(true);
  fake().reset_counters();
  CUjit_option options[] = {CU_JIT_THREADS_PER_BLOCK};
  void* values[] = {reinterpret_cast<void*>(std::uintptr_t{128})};
  CHECK(load_expecting(small_ptx().c_str(), CUDA_SUCCESS, 1, options, values) == JITCACHE_OUTCOME_COMPILED_LOCALLY);
  CHECK_THAT(std::string(last_info().reason), Catch::Contains("cannot_compile") && Catch::Contains("stored"));
  CHECK(fake().counters().link_compiles == 1);
  CHECK(stat_value(live.daemon, "compile_refused") == 1);
  CHECK(stat_value(live.daemon, "compiles") == 0);
  CHECK(stat_value(live.daemon, "puts") == 1);
  CHECK(load_expecting(small_ptx().c_str(), CUDA_SUCCESS, 1, options, values) == JITCACHE_OUTCOME_HIT);
}

TEST_CASE("load flow: a compile error from the daemon ends in the driver's own load, error and log") {
  LiveDaemon live(true);
  fake().reset_counters();
  const std::string bad = ".version 9.0\n.target sm_90\n.address_size 64\nthis is not ptx;\n";
  char error_log[1024] = {};
  CUjit_option options[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void* values[] = {error_log, reinterpret_cast<void*>(sizeof(error_log))};
  CHECK(load_expecting(bad.c_str(), CUDA_ERROR_INVALID_PTX, 2, options, values) == JITCACHE_OUTCOME_UNCACHED_FALLBACK);
  const auto info = last_info();
  CHECK_THAT(std::string(info.reason), Catch::Contains("compile_error"));
  CHECK(info.stage == JITCACHE_STAGE_JIT);
  CHECK(std::string(error_log).size() > 0);  // the driver's own log
  CHECK(fake().counters().ptx_jit_failures == 1);
  CHECK(fake().counters().link_compiles == 0);  // not compiled twice here
  CHECK(stat_value(live.daemon, "compiles") == 1);
  CHECK(stat_value(live.daemon, "puts") == 0);
}

TEST_CASE("load flow: a daemon that dies mid-COMPILE is the uncached fallback") {
  LiveDaemon live(true);
  fake().reset_counters();
  const std::string ptx = corpus_ptx("mid_kernels.ptx");
  std::thread killer([&] {
    if (wait_for_stat(live.daemon, "compile_running", 1)) live.daemon.kill_hard();
  });
  CHECK(load_expecting(ptx.c_str(), CUDA_SUCCESS) == JITCACHE_OUTCOME_UNCACHED_FALLBACK);
  killer.join();
  CHECK_FALSE(live.daemon.running());
  CHECK_THAT(std::string(last_info().reason), Catch::Contains("cannot be used"));
  CHECK(counters().daemon_unavailable == 1);
  CHECK(fake().counters().ptx_jit_compiles == 1);  // the driver's own load
}

TEST_CASE("load flow: a compile that outlasts compile_timeout_ms is compiled locally, and the daemon stores its own") {
  LiveDaemon live(true);
  jitcache_config config{};
  config.struct_size = sizeof(config);
  config.socket_path = live.daemon.socket_path().c_str();
  config.quiet = 1;
  config.compile_timeout_ms = 20;
  REQUIRE(jitcache_configure(&config) == 0);
  fake().reset_counters();
  const std::string ptx = corpus_ptx("mid_kernels.ptx");
  CHECK(load_expecting(ptx.c_str(), CUDA_SUCCESS) == JITCACHE_OUTCOME_COMPILED_LOCALLY);
  CHECK_THAT(std::string(last_info().reason), Catch::Contains("compile_timeout"));
  CHECK(fake().counters().link_compiles == 1);
  CHECK(counters().daemon_unavailable == 0);  // a long compile is not a dead daemon
  REQUIRE(wait_for_stat(live.daemon, "compile_stored", 1));
  CHECK(stat_value(live.daemon, "puts") == 0);
  CHECK(load_expecting(ptx.c_str(), CUDA_SUCCESS) == JITCACHE_OUTCOME_HIT);
}

TEST_CASE("load flow: a caller built against 0.1.0 (no compile_timeout_ms) is accepted") {
  LiveDaemon live(true);
  jitcache_config config{};
  config.struct_size = offsetof(jitcache_config, quiet) + sizeof(int);
  config.socket_path = live.daemon.socket_path().c_str();
  config.quiet = 1;
  config.compile_timeout_ms = 1;  // beyond the caller's struct: must not be read
  REQUIRE(jitcache_configure(&config) == 0);
  CHECK(load_expecting(small_ptx().c_str(), CUDA_SUCCESS) == JITCACHE_OUTCOME_COMPILED_BY_DAEMON);
  config.struct_size = offsetof(jitcache_config, quiet);
  CHECK(jitcache_configure(&config) == -1);
}
