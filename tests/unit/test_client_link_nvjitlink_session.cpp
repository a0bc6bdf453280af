// An nvJitLink session through the cache (client/src/link/nvjitlink_session.hpp) with the toolkit's
// real nvJitLink (it needs no GPU) and an in-memory daemon (tests/support/fake_cache_port.hpp): a
// miss links for real and stores exactly nvJitLink's image, a hit serves it and answers the calls that
// read a finished link as nvJitLink does, each key field makes another key, the daemon's compile is
// used when it offers one, and whatever the cache cannot do is nvJitLink's own answer.
#include <catch2/catch.hpp>

#include <dlfcn.h>

#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include <client/src/link/nvjitlink_identity.hpp>
#include <client/src/link/nvjitlink_session.hpp>
#include <client/src/loader/load_record.hpp>
#include <proto/jit_options.hpp>
#include <proto/linker_identity.hpp>
#include <tests/support/fake_cache_port.hpp>

using namespace jitcache;
using client::link::LinkEnvironment;
using client::link::NvJitLinkEntryPoints;
using client::link::NvJitLinkSession;
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

// The 13.0 family of the linked libnvJitLink.
NvJitLinkEntryPoints real_functions() {
  NvJitLinkEntryPoints real;
  real.create = &__nvJitLinkCreate_13_0;
  real.destroy = &__nvJitLinkDestroy_13_0;
  real.add_data = &__nvJitLinkAddData_13_0;
  real.add_file = &__nvJitLinkAddFile_13_0;
  real.complete = &__nvJitLinkComplete_13_0;
  real.get_linked_cubin_size = &__nvJitLinkGetLinkedCubinSize_13_0;
  real.get_linked_cubin = &__nvJitLinkGetLinkedCubin_13_0;
  real.get_linked_ptx_size = &__nvJitLinkGetLinkedPtxSize_13_0;
  real.get_linked_ptx = &__nvJitLinkGetLinkedPtx_13_0;
  real.get_error_log_size = &__nvJitLinkGetErrorLogSize_13_0;
  real.get_error_log = &__nvJitLinkGetErrorLog_13_0;
  real.get_info_log_size = &__nvJitLinkGetInfoLogSize_13_0;
  real.get_info_log = &__nvJitLinkGetInfoLog_13_0;
  return real;
}

struct Input {
  std::string text;
  std::string name;
};

struct Link {
  std::vector<std::string> options = {"-arch=sm_90", "-O3"};
  std::vector<Input> inputs = {{caller_ptx(), "caller"}, {callee_ptx(), "callee"}};
  std::optional<proto::DriverId> library;  // default: the linked library's identity
  // Add an input after Complete (nvJitLink prints its refusal on stderr when it has linked for real).
  bool add_after_complete = false;

  struct Result {
    std::vector<nvJitLinkResult> adds;
    nvJitLinkResult complete = NVJITLINK_ERROR_INTERNAL;
    std::vector<std::uint8_t> cubin;
    std::string info_log;
    std::string error_log;
    nvJitLinkResult ptx_size = NVJITLINK_SUCCESS;
    nvJitLinkResult add_after = NVJITLINK_SUCCESS;
    jitcache_load_info record{};
    std::string uncacheable;
  };

  Result run(FakeCachePort& port) {
    const NvJitLinkEntryPoints real = real_functions();
    client::loader::ClientSettings settings;
    settings.published = false;
    settings.socket_path = "fake";
    settings.quiet = true;
    static client::loader::ClientCounters counters;
    LinkEnvironment env{nullptr, port, settings, counters};
    std::vector<const char*> pointers;
    std::vector<std::string_view> views;
    for (const std::string& option : options) {
      pointers.push_back(option.c_str());
      views.emplace_back(option);
    }
    nvJitLinkHandle handle = nullptr;
    REQUIRE(real.create(&handle, static_cast<std::uint32_t>(pointers.size()), pointers.data()) == NVJITLINK_SUCCESS);
    auto identity = library ? common::Result<proto::DriverId>(*library)
                            : client::link::nvjitlink_identity(reinterpret_cast<const void*>(real.create), &::dlsym);
    NvJitLinkSession session(handle, views, identity);
    Result out;
    for (const Input& input : inputs) {
      out.adds.push_back(
          session.add_data(real, NVJITLINK_INPUT_PTX, input.text.data(), input.text.size() + 1, input.name.c_str()));
    }
    out.complete = session.complete(real, env);
    out.record = client::loader::last_load_info();
    std::size_t size = 0;
    if (out.complete == NVJITLINK_SUCCESS && session.linked_cubin_size(real, &size) == NVJITLINK_SUCCESS) {
      out.cubin.resize(size);
      REQUIRE(session.linked_cubin(real, out.cubin.data()) == NVJITLINK_SUCCESS);
    }
    std::size_t log_size = 0;
    REQUIRE(session.info_log_size(real, &log_size) == NVJITLINK_SUCCESS);
    out.info_log.assign(log_size, '\0');
    if (log_size > 0) REQUIRE(session.info_log(real, out.info_log.data()) == NVJITLINK_SUCCESS);
    REQUIRE(session.error_log_size(real, &log_size) == NVJITLINK_SUCCESS);
    out.error_log.assign(log_size, '\0');
    if (log_size > 0) REQUIRE(session.error_log(real, out.error_log.data()) == NVJITLINK_SUCCESS);
    std::size_t ptx_size = 0;
    out.ptx_size = session.linked_ptx_size(real, &ptx_size);
    if (add_after_complete) {
      out.add_after = session.add_data(real, NVJITLINK_INPUT_PTX, caller_ptx().data(), caller_ptx().size() + 1, "late");
    }
    out.uncacheable = session.uncacheable_reason();
    real.destroy(&handle);
    return out;
  }
};

// What nvJitLink itself links for `link`, without the cache.
std::vector<std::uint8_t> plain_link(const Link& link) {
  const NvJitLinkEntryPoints real = real_functions();
  std::vector<const char*> pointers;
  for (const std::string& option : link.options) pointers.push_back(option.c_str());
  nvJitLinkHandle handle = nullptr;
  REQUIRE(real.create(&handle, static_cast<std::uint32_t>(pointers.size()), pointers.data()) == NVJITLINK_SUCCESS);
  for (const Input& input : link.inputs) {
    REQUIRE(real.add_data(handle, NVJITLINK_INPUT_PTX, input.text.data(), input.text.size() + 1, input.name.c_str()) ==
            NVJITLINK_SUCCESS);
  }
  REQUIRE(real.complete(handle) == NVJITLINK_SUCCESS);
  std::size_t size = 0;
  REQUIRE(real.get_linked_cubin_size(handle, &size) == NVJITLINK_SUCCESS);
  std::vector<std::uint8_t> cubin(size);
  REQUIRE(real.get_linked_cubin(handle, cubin.data()) == NVJITLINK_SUCCESS);
  real.destroy(&handle);
  return cubin;
}

proto::KeyFields stored_key(Link link) {
  FakeCachePort port;
  auto result = link.run(port);
  REQUIRE(result.complete == NVJITLINK_SUCCESS);
  REQUIRE(port.puts.size() == 1);
  return port.puts.front().key;
}

void check_misses(const Link& changed) {
  CHECK(proto::key_id(stored_key(changed)) != proto::key_id(stored_key(Link{})));
}

FakeCachePort::Entry entry_of(const FakeCachePort& port) {
  REQUIRE(port.puts.size() == 1);
  return FakeCachePort::Entry{port.puts[0].key, port.puts[0].content_fast, port.put_images[0]};
}

}  // namespace

TEST_CASE("nvjitlink session: a miss stores exactly nvJitLink's image under an nvJitLink key") {
  FakeCachePort port;
  auto result = Link{}.run(port);
  REQUIRE(result.complete == NVJITLINK_SUCCESS);
  CHECK(result.adds == std::vector<nvJitLinkResult>{NVJITLINK_SUCCESS, NVJITLINK_SUCCESS});
  CHECK(result.cubin == plain_link(Link{}));
  REQUIRE(port.puts.size() == 1);
  const proto::KeyFields& key = port.puts[0].key;
  CHECK(key.options == "link=nvjitlink;nvjitlink=-O3");
  CHECK(key.arch == "sm_90");
  unsigned major = 0;
  unsigned minor = 0;
  REQUIRE(nvJitLinkVersion(&major, &minor) == NVJITLINK_SUCCESS);
  CHECK(key.driver_api == major * 1000 + minor * 10);
  CHECK_THAT(key.driver_build,
             Catch::StartsWith("nvjitlink-" + std::to_string(major) + "." + std::to_string(minor) + "-"));
  CHECK(port.put_images[0] == result.cubin);
  CHECK(result.record.outcome == JITCACHE_OUTCOME_COMPILED_LOCALLY);
  // Once linked for real, the calls are nvJitLink's.
  CHECK(result.ptx_size == NVJITLINK_ERROR_INVALID_INPUT);
}

TEST_CASE("nvjitlink session: a hit serves the image and answers the finished link's calls as nvJitLink does") {
  FakeCachePort first;
  REQUIRE(Link{}.run(first).complete == NVJITLINK_SUCCESS);
  FakeCachePort port;
  port.entries.push_back(entry_of(first));
  Link link;
  link.add_after_complete = true;
  auto result = link.run(port);
  REQUIRE(result.complete == NVJITLINK_SUCCESS);
  CHECK(result.cubin == first.put_images[0]);
  CHECK(port.puts.empty());
  CHECK(result.record.outcome == JITCACHE_OUTCOME_HIT);
  CHECK(result.info_log.empty());  // nvJitLink writes none without -verbose or -time
  CHECK(result.error_log.empty());
  CHECK(result.ptx_size == NVJITLINK_ERROR_INVALID_INPUT);
  CHECK(result.add_after == NVJITLINK_ERROR_INTERNAL);
}

TEST_CASE(
    "nvjitlink session: -verbose is honoured but not keyed, and a hit's info log says where the image came from") {
  Link verbose;
  verbose.options.push_back("-verbose");
  CHECK(proto::key_id(stored_key(verbose)) == proto::key_id(stored_key(Link{})));
  FakeCachePort first;
  REQUIRE(Link{}.run(first).complete == NVJITLINK_SUCCESS);
  FakeCachePort port;
  port.entries.push_back(entry_of(first));
  auto result = verbose.run(port);
  CHECK_THAT(result.info_log, Catch::StartsWith("jitcache: linked sm_90 image"));
}

TEST_CASE("nvjitlink session: inputs in another order are another key") {
  Link swapped;
  std::swap(swapped.inputs[0], swapped.inputs[1]);
  check_misses(swapped);
}

TEST_CASE("nvjitlink session: another keyed option is another key") {
  Link unoptimised;
  unoptimised.options = {"-arch=sm_90", "-O0"};
  check_misses(unoptimised);
  Link defaults;
  defaults.options = {"-arch=sm_90"};  // -O3 is the default, but an explicit one changes the bytes
  check_misses(defaults);
}

TEST_CASE("nvjitlink session: -arch is the key's arch") {
  Link older;
  older.options = {"-arch=sm_80", "-O3"};
  CHECK(stored_key(older).arch == "sm_80");
  check_misses(older);
}

TEST_CASE("nvjitlink session: another nvJitLink library is another key") {
  Link other;
  other.library = proto::nvjitlink_driver_id(13, 0, 12345);
  CHECK(stored_key(other).driver_build == "nvjitlink-13.0-12345");
  check_misses(other);
}

TEST_CASE("nvjitlink session: another byte in an input is another key, another name is not") {
  Link changed;
  changed.inputs[0].text += "\n// a comment\n";
  check_misses(changed);
  Link renamed;
  renamed.inputs[0].name = "another name";
  CHECK(proto::key_id(stored_key(renamed)) == proto::key_id(stored_key(Link{})));
}

TEST_CASE("nvjitlink session: a bad PTX fails at nvJitLinkComplete with nvJitLinkAddData's result and log") {
  FakeCachePort port;
  Link link;
  link.inputs[1].text = ".version 9.0\n.target sm_90\n.address_size 64\n.visible .entry k() { bogus; }\n";
  auto result = link.run(port);
  CHECK(result.adds == std::vector<nvJitLinkResult>{NVJITLINK_SUCCESS, NVJITLINK_SUCCESS});
  CHECK(result.complete == NVJITLINK_ERROR_PTX_COMPILE);
  CHECK_THAT(result.error_log, Catch::Contains("bogus"));
  CHECK(port.puts.empty());
}

TEST_CASE("nvjitlink session: -ptx and unknown options leave the link to nvJitLink, uncached") {
  for (const char* option : {"-ptx", "-some-future-option"}) {
    INFO(option);
    // nvJitLink refuses an unknown option at create; -lto -ptx needs LTO-IR. Neither is keyed.
    std::vector<std::string_view> options = {"-arch=sm_90", option};
    NvJitLinkSession session(nullptr, options, proto::nvjitlink_driver_id(13, 0, 1));
    CHECK_THAT(session.uncacheable_reason(), Catch::Contains(option));
  }
}

TEST_CASE("nvjitlink session: a miss the daemon links (capability bit 9) is served from its image") {
  FakeCachePort first;
  REQUIRE(Link{}.run(first).complete == NVJITLINK_SUCCESS);
  FakeCachePort port;
  port.capability_bits |= proto::k_capability_compile_link;
  port.compiled = entry_of(first);
  auto result = Link{}.run(port);
  REQUIRE(result.complete == NVJITLINK_SUCCESS);
  CHECK(result.cubin == first.put_images[0]);
  CHECK(result.record.outcome == JITCACHE_OUTCOME_COMPILED_BY_DAEMON);
  CHECK(port.puts.empty());
  REQUIRE(port.compiles.size() == 1);
  const proto::CompileRequest& request = port.compiles[0];
  CHECK(request.options == "link=nvjitlink;nvjitlink=-O3");
  CHECK(request.ptx.empty());
  REQUIRE(request.link_inputs.size() == 2);
  CHECK(request.link_inputs[0].data.size() == caller_ptx().size() + 1);
}

TEST_CASE("nvjitlink session: a daemon that cannot link it leaves the miss to nvJitLink, stored") {
  FakeCachePort port;
  port.capability_bits |= proto::k_capability_compile_link;
  port.compile_kind = client::transport::CompileAnswer::Kind::cannot_compile;
  auto result = Link{}.run(port);
  REQUIRE(result.complete == NVJITLINK_SUCCESS);
  CHECK(port.compiles.size() == 1);
  CHECK(port.puts.size() == 1);
  CHECK(result.cubin == plain_link(Link{}));
}

TEST_CASE("nvjitlink session: a daemon without bit 9 is not asked to link") {
  FakeCachePort port;
  REQUIRE(Link{}.run(port).complete == NVJITLINK_SUCCESS);
  CHECK(port.compiles.empty());
  CHECK(port.puts.size() == 1);
}
