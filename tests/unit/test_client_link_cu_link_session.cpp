// A cuLink* session through the cache (client/src/link/cu_link_session.hpp) with the fake driver
// (tests/fakes) as the real cuLink* and an in-memory daemon (tests/support/fake_cache_port.hpp): a
// miss links for real and stores the image, a hit serves it without the driver compiling anything,
// every key field that changes the image makes another key, and whatever the cache cannot do is the
// driver's own answer.
#include <catch2/catch.hpp>

#include <dlfcn.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <client/src/driver/driver_api.hpp>
#include <client/src/link/cu_link_session.hpp>
#include <client/src/loader/load_record.hpp>
#include <proto/jit_options.hpp>
#include <tests/support/fake_cache_port.hpp>
#include <tests/support/fake_driver.hpp>
#include <tests/support/temp_dir.hpp>

using namespace jitcache;
using client::link::CuLinkEntryPoints;
using client::link::CuLinkSession;
using client::link::LinkEnvironment;
using testing::FakeCachePort;

namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

const std::string& caller_ptx() {
  static const std::string text = read_file(std::string(JITCACHE_TEST_DATA_DIR) + "/link/link_caller.ptx");
  return text;
}
const std::string& callee_ptx() {
  static const std::string text = read_file(std::string(JITCACHE_TEST_DATA_DIR) + "/link/link_callee.ptx");
  return text;
}

// The fake driver, opened once: its cuLink* entry points and the DriverApi the client would use.
struct Driver {
  testing::FakeDriver fake;
  std::shared_ptr<const client::driver::DriverApi> api;
  CuLinkEntryPoints real;

  Driver() {
    auto opened = client::driver::open_driver(testing::FakeDriver::path());
    REQUIRE(opened);
    api = *opened;
    void* handle = ::dlopen(testing::FakeDriver::path().c_str(), RTLD_NOW | RTLD_NOLOAD);
    REQUIRE(handle != nullptr);
    real.create = reinterpret_cast<decltype(real.create)>(::dlsym(handle, "cuLinkCreate_v2"));
    real.add_data = reinterpret_cast<decltype(real.add_data)>(::dlsym(handle, "cuLinkAddData_v2"));
    real.complete = reinterpret_cast<decltype(real.complete)>(::dlsym(handle, "cuLinkComplete"));
    real.destroy = reinterpret_cast<decltype(real.destroy)>(::dlsym(handle, "cuLinkDestroy"));
    REQUIRE(real.create != nullptr);
    REQUIRE(real.add_data != nullptr);
  }
};

Driver& driver() {
  static Driver instance;
  return instance;
}

// One input as a test adds it.
struct Input {
  std::string text;
  std::string name;
  std::vector<CUjit_option> options;
  std::vector<void*> values;
  CUjitInputType type = CU_JIT_INPUT_PTX;
  bool with_nul = true;  // passed with its terminator counted, as most callers do (size + 1)
};

// A whole session: create options, inputs, Complete, and what came out.
struct Link {
  std::vector<CUjit_option> options;
  std::vector<void*> values;
  std::vector<Input> inputs;
  const client::driver::DriverApi* api = nullptr;  // default: the fake's

  struct Result {
    CUresult create = CUDA_SUCCESS;
    std::vector<CUresult> adds;
    CUresult complete = CUDA_ERROR_UNKNOWN;
    std::vector<std::uint8_t> cubin;
    jitcache_load_info record{};
    std::string uncacheable;
  };

  Result run(FakeCachePort& port) {
    Driver& d = driver();
    client::loader::ClientSettings settings;
    settings.published = false;
    settings.socket_path = "fake";
    settings.quiet = true;
    static client::loader::ClientCounters counters;
    LinkEnvironment env{api != nullptr ? api : d.api.get(), port, settings, counters};
    Result out;
    CUlinkState state = nullptr;
    out.create = d.real.create(static_cast<unsigned>(options.size()), options.data(), values.data(), &state);
    REQUIRE(out.create == CUDA_SUCCESS);
    CuLinkSession session(d.real, state, static_cast<unsigned>(options.size()), options.data(), values.data());
    for (Input& input : inputs) {
      out.adds.push_back(session.add_data(d.real, input.type, input.text.data(),
                                          input.text.size() + (input.with_nul ? 1 : 0), input.name.c_str(),
                                          static_cast<unsigned>(input.options.size()), input.options.data(),
                                          input.values.data()));
    }
    void* cubin = nullptr;
    std::size_t size = 0;
    out.complete = session.complete(d.real, env, &cubin, &size);
    if (out.complete == CUDA_SUCCESS)
      out.cubin.assign(static_cast<std::uint8_t*>(cubin), static_cast<std::uint8_t*>(cubin) + size);
    out.record = client::loader::last_load_info();
    out.uncacheable = session.uncacheable_reason();
    d.real.destroy(state);
    return out;
  }
};

Link two_inputs() {
  Link link;
  link.inputs = {{caller_ptx(), "caller.ptx", {}, {}}, {callee_ptx(), "callee.ptx", {}, {}}};
  return link;
}

// The key the session stored its image under (its one PUT).
proto::KeyFields stored_key(Link link) {
  FakeCachePort port;
  auto result = link.run(port);
  REQUIRE(result.complete == CUDA_SUCCESS);
  REQUIRE(port.puts.size() == 1);
  return port.puts.front().key;
}

void check_misses(const Link& changed) {
  const proto::KeyFields base = stored_key(two_inputs());
  const proto::KeyFields other = stored_key(changed);
  CHECK(proto::key_id(other) != proto::key_id(base));
}

FakeCachePort::Entry entry_of(const FakeCachePort& port) {
  REQUIRE(port.puts.size() == 1);
  return FakeCachePort::Entry{port.puts[0].key, port.puts[0].content_fast, port.put_images[0]};
}

}  // namespace

TEST_CASE("cu link session: a miss links with the driver, stores the image under a cuLink key, returns the driver's") {
  FakeCachePort port;
  auto result = two_inputs().run(port);
  REQUIRE(result.complete == CUDA_SUCCESS);
  CHECK(result.adds == std::vector<CUresult>{CUDA_SUCCESS, CUDA_SUCCESS});
  REQUIRE(port.puts.size() == 1);
  const proto::PutRequest& put = port.puts[0];
  CHECK(put.key.options == proto::cu_link_option_text(proto::default_option_text()));
  CHECK(proto::link_flavor(put.key.options) == proto::LinkFlavor::cu_link);
  CHECK(put.key.arch == "sm_90a");  // the fake's CC 9.0 context, as the H200's JIT
  CHECK(put.key.driver_api == 13000);
  CHECK(put.key.driver_build == "999.0.1");
  CHECK(put.content_fast.has_value());
  CHECK(port.put_images[0] == result.cubin);
  CHECK(result.record.outcome == JITCACHE_OUTCOME_COMPILED_LOCALLY);
  CHECK(std::string(result.record.key_id) == proto::to_hex(proto::key_id(put.key)));
}

TEST_CASE("cu link session: a hit serves the stored image, fills the caller's logs, and the driver compiles nothing") {
  FakeCachePort first;
  auto cold = two_inputs().run(first);
  REQUIRE(cold.complete == CUDA_SUCCESS);

  FakeCachePort port;
  port.entries.push_back(entry_of(first));
  char info[256] = "untouched";
  Link link = two_inputs();
  link.options = {CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES, CU_JIT_WALL_TIME, CU_JIT_LOG_VERBOSE};
  link.values = {info, reinterpret_cast<void*>(sizeof(info)), nullptr, reinterpret_cast<void*>(1)};
  driver().fake.reset_counters();
  auto warm = link.run(port);
  REQUIRE(warm.complete == CUDA_SUCCESS);
  CHECK(warm.cubin == cold.cubin);
  CHECK(driver().fake.counters().link_compiles == 0);
  CHECK(driver().fake.counters().link_completes == 0);
  CHECK(port.puts.empty());
  CHECK(warm.record.outcome == JITCACHE_OUTCOME_HIT);
  CHECK_THAT(std::string(info), Catch::StartsWith("jitcache: linked sm_90a image"));
  CHECK(reinterpret_cast<std::uintptr_t>(link.values[1]) == std::strlen(info) + 1);
  float wall = -1;
  std::memcpy(&wall, &link.values[2], sizeof(wall));
  CHECK(wall >= 0);
}

TEST_CASE("cu link session: inputs in another order are another key") {
  Link swapped = two_inputs();
  std::swap(swapped.inputs[0], swapped.inputs[1]);
  check_misses(swapped);
}

TEST_CASE("cu link session: an input's own options are part of the key") {
  Link with_lineinfo = two_inputs();
  with_lineinfo.inputs[1].options = {CU_JIT_GENERATE_LINE_INFO};
  with_lineinfo.inputs[1].values = {reinterpret_cast<void*>(std::uintptr_t{1})};
  check_misses(with_lineinfo);
}

TEST_CASE("cu link session: another byte in an input is another key") {
  Link changed = two_inputs();
  changed.inputs[1].text += "\n// a comment\n";
  check_misses(changed);
}

TEST_CASE("cu link session: the create options are part of the key") {
  Link optimised = two_inputs();
  optimised.options = {CU_JIT_OPTIMIZATION_LEVEL};
  optimised.values = {reinterpret_cast<void*>(std::uintptr_t{1})};
  check_misses(optimised);
  CHECK(stored_key(optimised).options == "link=cu;" + *proto::canonicalize_option_text("opt=1"));
}

TEST_CASE("cu link session: CU_JIT_TARGET is the key's arch") {
  Link targeted = two_inputs();
  targeted.options = {CU_JIT_TARGET};
  targeted.values = {reinterpret_cast<void*>(std::uintptr_t{CU_TARGET_COMPUTE_80})};
  CHECK(stored_key(targeted).arch == "sm_80");
  check_misses(targeted);
}

TEST_CASE("cu link session: another driver build is another key") {
  client::driver::DriverApi other = *driver().api;
  other.build = "999.0.2";
  Link link = two_inputs();
  link.api = &other;
  CHECK(stored_key(link).driver_build == "999.0.2");
  check_misses(link);
}

TEST_CASE("cu link session: input names and log options are not part of the key") {
  Link renamed = two_inputs();
  renamed.inputs[0].name = "another name";
  char log[128];
  renamed.options = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES, CU_JIT_LOG_VERBOSE};
  renamed.values = {log, reinterpret_cast<void*>(sizeof(log)), reinterpret_cast<void*>(std::uintptr_t{1})};
  CHECK(proto::key_id(stored_key(renamed)) == proto::key_id(stored_key(two_inputs())));
}

TEST_CASE(
    "cu link session: a bad PTX fails at cuLinkComplete with the driver's CUresult and log, and nothing is stored") {
  FakeCachePort port;
  Link link = two_inputs();
  link.inputs[1].text = ".version 9.0\n.target sm_90\n.address_size 64\n.visible .entry k() { bogus; }\n";
  char error[1024] = {0};
  link.options = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  link.values = {error, reinterpret_cast<void*>(sizeof(error))};
  auto result = link.run(port);
  CHECK(result.adds == std::vector<CUresult>{CUDA_SUCCESS, CUDA_SUCCESS});
  CHECK(result.complete == CUDA_ERROR_INVALID_PTX);
  CHECK_THAT(std::string(error), Catch::Contains("bogus"));
  CHECK(port.puts.empty());
  CHECK(result.record.result == CUDA_ERROR_INVALID_PTX);
  CHECK_THAT(std::string(result.record.reason), Catch::Contains("cuLinkAddData returned CUDA_ERROR_INVALID_PTX"));
}

TEST_CASE("cu link session: an NVVM input makes it the driver's from there on, the earlier inputs replayed first") {
  FakeCachePort port;
  Link link = two_inputs();
  link.inputs.insert(link.inputs.begin() + 1, Input{"not NVVM", "nvvm", {}, {}, CU_JIT_INPUT_NVVM});
  driver().fake.reset_counters();
  auto result = link.run(port);
  // The caller's PTX reached the driver before the NVVM input, whose refusal is the driver's (801).
  CHECK(result.adds[1] == CUDA_ERROR_NOT_SUPPORTED);
  CHECK(driver().fake.counters().link_compiles >= 1);
  CHECK_THAT(result.uncacheable, Catch::Contains("input type 5"));
  CHECK(port.puts.empty());
  CHECK(port.fast_lookups.empty());
  CHECK(result.record.outcome == JITCACHE_OUTCOME_UNCACHED_FALLBACK);
}

TEST_CASE("cu link session: options a hit cannot honour make the whole session the driver's") {
  FakeCachePort port;
  Link link = two_inputs();
  link.options = {CU_JIT_THREADS_PER_BLOCK};
  link.values = {reinterpret_cast<void*>(std::uintptr_t{128})};
  auto result = link.run(port);
  CHECK(result.complete == CUDA_SUCCESS);
  CHECK_THAT(result.uncacheable, Catch::Contains("CU_JIT_THREADS_PER_BLOCK"));
  CHECK(port.puts.empty());
  CHECK(port.fast_lookups.empty());
}

TEST_CASE("cu link session: with the daemon down the link is the driver's and nothing is stored") {
  FakeCachePort port;
  port.connect_error = common::make_error(common::ErrorCode::unavailable, "connection refused");
  auto result = two_inputs().run(port);
  CHECK(result.complete == CUDA_SUCCESS);
  CHECK_FALSE(result.cubin.empty());
  CHECK(port.puts.empty());
  CHECK(result.record.outcome == JITCACHE_OUTCOME_UNCACHED_FALLBACK);
  CHECK_THAT(std::string(result.record.reason), Catch::Contains("connection refused"));
}

TEST_CASE("cu link session: a cached image that fails the client's check is linked again, never served") {
  FakeCachePort first;
  REQUIRE(two_inputs().run(first).complete == CUDA_SUCCESS);
  FakeCachePort port;
  FakeCachePort::Entry damaged = entry_of(first);
  damaged.image.assign(damaged.image.size(), 0x5a);
  port.entries.push_back(damaged);
  auto result = two_inputs().run(port);
  REQUIRE(result.complete == CUDA_SUCCESS);
  CHECK(result.cubin == first.put_images[0]);
  CHECK(port.puts.size() == 1);
}

TEST_CASE("cu link session: a file is read when added, keyed as its bytes, and linked from them") {
  testing::TempDir dir;
  const std::string path = dir.file("callee.ptx");
  { std::ofstream(path, std::ios::binary) << callee_ptx(); }
  Driver& d = driver();
  FakeCachePort port;
  client::loader::ClientSettings settings;
  settings.published = false;
  client::loader::ClientCounters counters;
  LinkEnvironment env{d.api.get(), port, settings, counters};
  CUlinkState state = nullptr;
  REQUIRE(d.real.create(0, nullptr, nullptr, &state) == CUDA_SUCCESS);
  CuLinkSession session(d.real, state, 0, nullptr, nullptr);
  std::string caller = caller_ptx();
  CHECK(session.add_data(d.real, CU_JIT_INPUT_PTX, caller.data(), caller.size() + 1, "caller.ptx", 0, nullptr,
                         nullptr) == CUDA_SUCCESS);
  // The entry points given here have no cuLinkAddFile: a kept file input never reaches it.
  CHECK(session.add_file(d.real, CU_JIT_INPUT_PTX, path.c_str(), 0, nullptr, nullptr) == CUDA_SUCCESS);
  { std::ofstream(path, std::ios::binary | std::ios::trunc) << "garbage written after the add"; }
  void* cubin = nullptr;
  std::size_t size = 0;
  REQUIRE(session.complete(d.real, env, &cubin, &size) == CUDA_SUCCESS);
  d.real.destroy(state);
  REQUIRE(port.puts.size() == 1);
  // The file's bytes as they were when added (no NUL: a file has none), named by its path: the key
  // of the same bytes added as data under another name, and the image the driver linked from them.
  Link as_data = two_inputs();
  as_data.inputs[1].with_nul = false;
  CHECK(proto::key_id(port.puts[0].key) == proto::key_id(stored_key(as_data)));
  CHECK(port.put_images[0].size() == size);
}
