// libjitcache's load flow (client/src/loader/load_flow.hpp) with no daemon and no driver: a fake
// cache port (tests/support/fake_cache_port.hpp) stands for jitcached, a DriverApi built by hand
// (tests/support/scripted_driver.hpp) for the driver. Each case checks what a program would see
// (the outcome, the module, the load record) and what the flow asked of the cache and the driver.
// The integration tests (tests/integration/test_client_load_flow.cpp) run the same paths against
// the real daemon and the fake libcuda.
#include <client/src/loader/load_flow.hpp>

#include <catch2/catch.hpp>

#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <tests/support/fake_cache_port.hpp>
#include <tests/support/sample_cubin.hpp>
#include <tests/support/scripted_driver.hpp>

using namespace jitcache;
using client::loader::CallerOptions;
using client::loader::ClientCounters;
using client::loader::ClientSettings;
using client::loader::LoadFlow;
using client::loader::LoadRecord;
using testing::FakeCachePort;
using testing::ScriptedDriver;

namespace {

// The key the flow builds for tests/data/small_kernel.ptx on CC 9.0 with driver 13000/580.159.04
// (tests/unit/test_client_key_key_builder.cpp has its known answers).
const char* const k_small_key_id = "25ef36cce2295eb7859a3662b2f3bfeaa446e73a95be3fb9c721bee9c7dad2b4";

const std::string& small_ptx() {
  static const std::string ptx = [] {
    std::ifstream in(std::string(JITCACHE_TEST_DATA_DIR) + "/small_kernel.ptx", std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  }();
  return ptx;
}

proto::KeyFields small_key() {
  proto::KeyFields key;
  key.content = proto::content_digest(proto::as_bytes(small_ptx()));
  key.arch = "sm_90a";
  key.driver_api = 13000;
  key.driver_build = "580.159.04";
  key.options = proto::default_option_text();
  return key;
}

proto::Checksum128 small_fast() { return proto::xxh3_128(proto::as_bytes(small_ptx())); }

std::vector<std::uint8_t> cubin(std::uint64_t seed) {
  testing::CubinSpec spec;
  spec.arch_specific = true;
  return testing::make_cubin(spec, seed, 1024);  // with code bytes, so seeds give different images
}

// The entry the daemon would hold for the small PTX: its key, its fast key, a cubin.
FakeCachePort::Entry small_entry(std::uint64_t seed = 1) { return {small_key(), small_fast(), cubin(seed)}; }

// One load of `image` through a LoadFlow on `port` and the scripted driver.
struct Load {
  CUresult result = CUDA_ERROR_UNKNOWN;
  CUmodule module = nullptr;
  jitcache_load_info info{};
};

struct Harness {
  Harness() {
    ScriptedDriver::reset();
    settings.socket_path = "/run/test/jitcached.sock";
    settings.quiet = true;
    settings.published = false;
  }

  Load load(const void* image, unsigned count = 0, CUjit_option* options = nullptr, void** values = nullptr) {
    const client::driver::DriverApi api = ScriptedDriver::api();
    LoadRecord record;
    CallerOptions caller(count, options, values);
    LoadFlow flow(api, port, settings, counters, record);
    Load done;
    done.result = flow.load(&done.module, image, caller);
    record.finish(done.result);
    done.info = client::loader::last_load_info();
    return done;
  }
  Load load_small() { return load(small_ptx().c_str()); }

  FakeCachePort port;
  ClientSettings settings;
  ClientCounters counters;
};

bool loaded_image(const std::vector<std::uint8_t>& probe, const std::vector<std::uint8_t>& image) {
  return probe.size() == image.size() && std::memcmp(probe.data(), image.data(), image.size()) == 0;
}

}  // namespace

TEST_CASE("load flow unit: a hit is one LOOKUP by fast key, checked and handed to the driver") {
  Harness h;
  const auto entry = small_entry();
  h.port.entries.push_back(entry);
  ScriptedDriver::instance().probe_bytes = entry.image.size();

  const Load done = h.load_small();
  CHECK(done.result == CUDA_SUCCESS);
  CHECK(done.module != nullptr);
  CHECK(done.info.outcome == JITCACHE_OUTCOME_HIT);
  CHECK(std::string(done.info.key_id) == k_small_key_id);
  CHECK(std::string(done.info.arch) == "sm_90a");
  CHECK(h.port.fast_lookups.size() == 1);
  CHECK(h.port.key_lookups.empty());
  CHECK(h.port.hellos == 0);  // a hit needs no HELLO
  CHECK(h.port.puts.empty());
  REQUIRE(ScriptedDriver::instance().loaded.size() == 1);
  CHECK(loaded_image(ScriptedDriver::instance().loaded[0], entry.image));
  CHECK(ScriptedDriver::instance().loaded_ex.empty());
  CHECK(ScriptedDriver::instance().linked_ptx.empty());
}

TEST_CASE("load flow unit: a miss at a daemon that compiles is one LOOKUP, then COMPILE, and the image loads") {
  Harness h;
  h.port.capability_bits |= proto::k_capability_compile;
  const auto compiled = small_entry(7);
  h.port.compiled = compiled;
  ScriptedDriver::instance().probe_bytes = compiled.image.size();

  const Load done = h.load_small();
  CHECK(done.result == CUDA_SUCCESS);
  CHECK(done.info.outcome == JITCACHE_OUTCOME_COMPILED_BY_DAEMON);
  // A fast-key miss at a daemon with fast keys is final: no LOOKUP by key follows it.
  CHECK(h.port.fast_lookups.size() == 1);
  CHECK(h.port.key_lookups.empty());
  CHECK(h.port.hellos == 1);  // the miss needs the capabilities (compile or not), and they say it is final
  REQUIRE(h.port.compiles.size() == 1);
  const proto::CompileRequest& request = h.port.compiles[0];
  CHECK(request.arch == "sm_90a");
  CHECK(request.driver_api == 13000);
  CHECK(request.driver_build == "580.159.04");
  CHECK(request.options == proto::default_option_text());
  CHECK(request.priority == proto::CompilePriority::interactive);
  CHECK(std::string(reinterpret_cast<const char*>(request.ptx.data()), request.ptx.size()) == small_ptx());
  CHECK(h.port.puts.empty());  // the daemon stored it
  CHECK(ScriptedDriver::instance().linked_ptx.empty());
  REQUIRE(ScriptedDriver::instance().loaded.size() == 1);
  CHECK(loaded_image(ScriptedDriver::instance().loaded[0], compiled.image));
}

TEST_CASE("load flow unit: a miss at a daemon that does not compile is JIT-compiled here and PUT with its fast key") {
  Harness h;
  ScriptedDriver::instance().linked_cubin = cubin(3);

  const Load done = h.load_small();
  CHECK(done.result == CUDA_SUCCESS);
  CHECK(done.info.outcome == JITCACHE_OUTCOME_COMPILED_LOCALLY);
  CHECK_THAT(std::string(done.info.reason), Catch::Contains("compiled with the driver's JIT and stored"));
  CHECK(h.port.fast_lookups.size() == 1);
  CHECK(h.port.key_lookups.empty());
  CHECK(h.port.compiles.empty());
  REQUIRE(ScriptedDriver::instance().linked_ptx.size() == 1);
  CHECK(ScriptedDriver::instance().linked_ptx[0] == small_ptx());
  REQUIRE(h.port.puts.size() == 1);
  const proto::PutRequest& put = h.port.puts[0];
  CHECK(put.key == small_key());
  REQUIRE(put.content_fast.has_value());
  CHECK(*put.content_fast == small_fast());
  CHECK(h.port.put_images[0] == ScriptedDriver::instance().linked_cubin);
}

TEST_CASE("load flow unit: a daemon without fast keys is asked by key, and its PUT carries no fast key") {
  Harness h;
  h.port.capability_bits &= ~proto::k_capability_fast_key;
  ScriptedDriver::instance().linked_cubin = cubin(3);

  SECTION("capabilities known: one LOOKUP, by key") {
    h.port.capabilities_known = true;
    CHECK(h.load_small().info.outcome == JITCACHE_OUTCOME_COMPILED_LOCALLY);
    CHECK(h.port.fast_lookups.empty());
    CHECK(h.port.key_lookups.size() == 1);
  }
  SECTION("capabilities not known yet: its refusal of the fast key sends HELLO, whose bits decide") {
    h.port.lookup_fast_status = proto::Status::bad_request;
    CHECK(h.load_small().info.outcome == JITCACHE_OUTCOME_COMPILED_LOCALLY);
    CHECK(h.port.fast_lookups.size() == 1);
    CHECK(h.port.hellos == 1);
    CHECK(h.port.key_lookups.size() == 1);
  }
  REQUIRE(h.port.puts.size() == 1);
  CHECK_FALSE(h.port.puts[0].content_fast.has_value());
}

TEST_CASE("load flow unit: a refused fast key at a daemon that has fast keys is the daemon's failure") {
  Harness h;
  h.port.lookup_fast_status = proto::Status::bad_request;
  const Load done = h.load_small();
  CHECK(done.info.outcome == JITCACHE_OUTCOME_UNCACHED_FALLBACK);
  CHECK(h.port.key_lookups.empty());
  CHECK(h.counters.daemon_unavailable == 1);
  CHECK(ScriptedDriver::instance().loaded_ex.size() == 1);
}

TEST_CASE("load flow unit: an entry found by fast key with another content digest is never loaded") {
  Harness h;
  auto stranger = small_entry(9);
  stranger.key.content = proto::content_digest(proto::as_bytes(std::string("another source")));
  h.port.entries.push_back(stranger);
  ScriptedDriver::instance().linked_cubin = cubin(3);
  ScriptedDriver::instance().probe_bytes = stranger.image.size();

  const Load done = h.load_small();
  CHECK(done.info.outcome == JITCACHE_OUTCOME_COMPILED_LOCALLY);
  CHECK(h.counters.fast_key_mismatches == 1);
  CHECK(h.port.fast_lookups.size() == 1);
  REQUIRE(h.port.key_lookups.size() == 1);  // the entry with our content digest, if there is one
  CHECK(h.port.key_lookups[0] == small_key());
  REQUIRE(ScriptedDriver::instance().loaded.size() == 1);  // the cubin compiled here, not the stranger
  CHECK_FALSE(loaded_image(ScriptedDriver::instance().loaded[0], stranger.image));
}

TEST_CASE("load flow unit: a hit the driver refuses as a bad image is reported, rebuilt and stored") {
  Harness h;
  h.port.entries.push_back(small_entry());
  ScriptedDriver& driver = ScriptedDriver::instance();
  driver.load_results.push_back(CUDA_ERROR_INVALID_IMAGE);
  driver.linked_cubin = cubin(5);

  const Load done = h.load_small();
  CHECK(done.result == CUDA_SUCCESS);
  CHECK(done.info.outcome == JITCACHE_OUTCOME_REBUILT_AFTER_FAILED_LOAD);
  CHECK(done.info.stage == JITCACHE_STAGE_LOAD);
  CHECK(done.info.stage_result == CUDA_ERROR_INVALID_IMAGE);
  REQUIRE(h.port.reports.size() == 1);
  CHECK(h.port.reports[0].key == small_key());
  CHECK(h.port.reports[0].cu_result == static_cast<std::uint32_t>(CUDA_ERROR_INVALID_IMAGE));
  CHECK(h.counters.failure_reports == 1);
  CHECK(driver.linked_ptx.size() == 1);
  CHECK(driver.loaded.size() == 2);  // the cached image, then the rebuilt one
  REQUIRE(h.port.puts.size() == 1);
  CHECK(h.port.put_images[0] == driver.linked_cubin);
}

TEST_CASE("load flow unit: a resource error loading a hit is the caller's answer, with no report and no rebuild") {
  Harness h;
  h.port.entries.push_back(small_entry());
  ScriptedDriver::instance().load_results.push_back(CUDA_ERROR_OUT_OF_MEMORY);
  const Load done = h.load_small();
  CHECK(done.result == CUDA_ERROR_OUT_OF_MEMORY);
  CHECK(done.info.outcome == JITCACHE_OUTCOME_HIT);
  CHECK(h.port.reports.empty());
  CHECK(ScriptedDriver::instance().linked_ptx.empty());
}

TEST_CASE("load flow unit: with the daemon absent the driver's own load decides, and the key is still recorded") {
  Harness h;
  h.port.connect_error = common::make_error(common::ErrorCode::unavailable, "nobody listens");
  CUjit_option options[] = {CU_JIT_OPTIMIZATION_LEVEL};
  void* values[] = {reinterpret_cast<void*>(std::uintptr_t{4})};

  const Load done = h.load(small_ptx().c_str(), 1, options, values);
  CHECK(done.result == CUDA_SUCCESS);
  CHECK(done.info.outcome == JITCACHE_OUTCOME_UNCACHED_FALLBACK);
  CHECK_THAT(std::string(done.info.reason),
             Catch::Contains("/run/test/jitcached.sock") && Catch::Contains("nobody listens"));
  CHECK(std::string(done.info.key_id) == k_small_key_id);  // optimisation level 4 is the default
  CHECK(h.counters.daemon_unavailable == 1);
  CHECK(h.port.fast_lookups.empty());
  REQUIRE(ScriptedDriver::instance().loaded_ex.size() == 1);
  CHECK(ScriptedDriver::instance().loaded_ex[0] == small_ptx().c_str());
  CHECK(ScriptedDriver::instance().loaded_ex_option_counts[0] == 1);  // the caller's options, as given
}

TEST_CASE("load flow unit: a published copy is loaded without connecting, and the hit is noted for the daemon") {
  Harness h;
  h.settings.published = true;
  const auto entry = small_entry();
  h.port.published.push_back(entry);
  ScriptedDriver::instance().probe_bytes = entry.image.size();

  const Load done = h.load_small();
  CHECK(done.result == CUDA_SUCCESS);
  CHECK(done.info.outcome == JITCACHE_OUTCOME_HIT);
  CHECK_THAT(std::string(done.info.reason), Catch::Contains("published copy"));
  CHECK(h.port.connects == 0);
  CHECK(h.port.fast_lookups.empty());
  REQUIRE(h.port.hit_notes.size() == 1);
  CHECK(h.port.hit_notes[0] == proto::fast_key_of(small_key(), small_fast()));
  CHECK(h.counters.published_hits == 1);
  REQUIRE(ScriptedDriver::instance().loaded.size() == 1);
  CHECK(loaded_image(ScriptedDriver::instance().loaded[0], entry.image));
}

TEST_CASE("load flow unit: a published copy of another source is refused and the socket asked") {
  Harness h;
  h.settings.published = true;
  auto stranger = small_entry(9);
  stranger.key.content = proto::content_digest(proto::as_bytes(std::string("another source")));
  h.port.published.push_back(stranger);
  h.port.entries.push_back(small_entry());

  const Load done = h.load_small();
  CHECK(done.info.outcome == JITCACHE_OUTCOME_HIT);
  CHECK(h.counters.published_rejects == 1);
  CHECK(h.counters.published_hits == 0);
  CHECK(h.port.fast_lookups.size() == 1);
  CHECK(h.port.hit_notes.empty());
}

TEST_CASE("load flow unit: cubins and fat binaries with a cubin for the device pass through without the cache") {
  Harness h;
  const auto image = cubin(1);
  const Load done = h.load(image.data());
  CHECK(done.info.outcome == JITCACHE_OUTCOME_PASS_THROUGH);
  CHECK_THAT(std::string(done.info.reason), Catch::Contains("a cubin"));
  CHECK(h.port.connects == 0);
  CHECK(ScriptedDriver::instance().loaded_ex.size() == 1);

  std::ifstream in(std::string(JITCACHE_TEST_DATA_DIR) + "/fatbin_kernel_sm90_compute90.fatbin", std::ios::binary);
  const std::string fat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  REQUIRE_FALSE(fat.empty());
  const Load walked = h.load(fat.data());
  CHECK(walked.info.outcome == JITCACHE_OUTCOME_PASS_THROUGH);
  CHECK_THAT(std::string(walked.info.reason), Catch::Contains("holds a cubin for this device"));
  CHECK(h.port.connects == 0);
}

TEST_CASE("load flow unit: PTX newer than the driver JIT-compiles is the driver's to refuse") {
  Harness h;
  std::string newer = small_ptx();
  newer.replace(newer.find(".version 9.0"), 12, ".version 9.9");
  ScriptedDriver::instance().load_ex_result = CUDA_ERROR_UNSUPPORTED_PTX_VERSION;
  const Load done = h.load(newer.c_str());
  CHECK(done.result == CUDA_ERROR_UNSUPPORTED_PTX_VERSION);
  CHECK(done.info.outcome == JITCACHE_OUTCOME_UNCACHED_FALLBACK);
  CHECK_THAT(std::string(done.info.reason), Catch::Contains("PTX ISA 9.9 is newer than this driver"));
  CHECK(h.port.connects == 0);
}
