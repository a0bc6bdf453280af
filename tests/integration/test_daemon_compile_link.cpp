// COMPILE of a link (PROTOCOL.md §5 COMPILE "Link inputs", capability bit 9) against the real daemon
// and worker: the daemon links an nvJitLink session's inputs with its own nvJitLink when the session
// ran on the same library build, stores the image in the shared namespace, answers it from the store
// afterwards, and refuses (linker) what it cannot link faithfully.
#include <catch2/catch.hpp>

#include <dlfcn.h>
#include <sys/stat.h>

#define NVJITLINK_NO_INLINE
#include <nvJitLink.h>
#undef NVJITLINK_NO_INLINE

#include <chrono>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <client/src/transport/daemon_client.hpp>
#include <proto/compile_messages.hpp>
#include <proto/jit_options.hpp>
#include <proto/link_content.hpp>
#include <proto/linker_identity.hpp>
#include <tests/support/daemon_process.hpp>
#include <tests/support/daemon_stats.hpp>
#include <tests/support/temp_dir.hpp>

using namespace std::chrono_literals;
using jitcache::client::transport::CompileAnswer;
using jitcache::testing::DaemonProcess;
using jitcache::testing::stat_value;
using jitcache::testing::TempDir;
namespace proto = jitcache::proto;

namespace {

std::string read_file(const std::string& name) {
  std::ifstream in(std::string(JITCACHE_TEST_DATA_DIR) + "/" + name, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// The nvJitLink this test links against, as a link's key names it: the worker's is the same library.
proto::DriverId this_nvjitlink() {
  unsigned major = 0;
  unsigned minor = 0;
  REQUIRE(nvJitLinkVersion(&major, &minor) == NVJITLINK_SUCCESS);
  Dl_info info{};
  REQUIRE(::dladdr(reinterpret_cast<void*>(&nvJitLinkVersion), &info) != 0);
  struct stat st {};
  REQUIRE(::stat(info.dli_fname, &st) == 0);
  return proto::nvjitlink_driver_id(major, minor, static_cast<std::uint64_t>(st.st_size));
}

struct LinkRequest {
  std::string caller = read_file("link/link_caller.ptx") + '\0';  // as a program passes it: size + 1
  std::string callee = read_file("link/link_callee.ptx");
  proto::CompileRequest request;

  explicit LinkRequest(proto::DriverId linker = this_nvjitlink(), std::string options = "") {
    request.arch = "sm_90";
    request.driver_api = linker.api;
    request.driver_build = linker.build;
    request.options = options.empty() ? proto::nvjitlink_option_text({"-O3"}) : options;
    request.link_inputs = {{proto::LinkInputKind::ptx, proto::as_bytes(caller)},
                           {proto::LinkInputKind::ptx, proto::as_bytes(callee)}};
  }
};

// What nvJitLink links for the request here, in the test's process.
std::vector<std::uint8_t> link_here(const LinkRequest& link) {
  const char* options[] = {"-arch=sm_90", "-O3"};
  nvJitLinkHandle handle = nullptr;
  REQUIRE(__nvJitLinkCreate_13_0(&handle, 2, options) == NVJITLINK_SUCCESS);
  REQUIRE(__nvJitLinkAddData_13_0(handle, NVJITLINK_INPUT_PTX, link.caller.data(), link.caller.size(), "a") ==
          NVJITLINK_SUCCESS);
  REQUIRE(__nvJitLinkAddData_13_0(handle, NVJITLINK_INPUT_PTX, link.callee.data(), link.callee.size(), "b") ==
          NVJITLINK_SUCCESS);
  REQUIRE(__nvJitLinkComplete_13_0(handle) == NVJITLINK_SUCCESS);
  std::size_t size = 0;
  REQUIRE(__nvJitLinkGetLinkedCubinSize_13_0(handle, &size) == NVJITLINK_SUCCESS);
  std::vector<std::uint8_t> cubin(size);
  REQUIRE(__nvJitLinkGetLinkedCubin_13_0(handle, cubin.data()) == NVJITLINK_SUCCESS);
  __nvJitLinkDestroy_13_0(&handle);
  return cubin;
}

CompileAnswer compile(jitcache::client::transport::DaemonClient& client, const proto::CompileRequest& request) {
  auto answer = client.compile(request, 60s);
  INFO((answer ? std::string() : answer.error().message));
  REQUIRE(answer);
  return std::move(*answer);
}

}  // namespace

TEST_CASE(
    "compile link: the daemon announces bit 9, links a session of its nvJitLink byte for byte, stores it shared") {
  TempDir dir;
  DaemonProcess daemon(dir);
  daemon.start();
  auto client = daemon.client();
  auto hello = client.hello("test");
  REQUIRE(hello);
  CHECK((hello->capabilities & proto::k_capability_compile_link) != 0);

  const LinkRequest link;
  const CompileAnswer compiled = compile(client, link.request);
  REQUIRE(compiled.kind == CompileAnswer::Kind::compiled);
  CHECK_FALSE(compiled.from_store);
  const auto image = compiled.image->bytes();
  CHECK(std::vector<std::uint8_t>(image.begin(), image.end()) == link_here(link));
  CHECK(compiled.image->info.namespace_id == 0);
  CHECK(compiled.image->info.key.content == proto::link_content_of(link.request));
  CHECK(compiled.image->info.key.options == "link=nvjitlink;nvjitlink=-O3");

  // The entry has the fast key a session looks it up by.
  auto by_fast_key =
      client.lookup_fast(proto::fast_key_of(compiled.image->info.key, proto::link_content_fast_of(link.request)),
                         jitcache::client::transport::ImageDelivery::bytes);
  REQUIRE(by_fast_key);
  CHECK(by_fast_key->has_value());

  const CompileAnswer again = compile(client, link.request);
  REQUIRE(again.kind == CompileAnswer::Kind::compiled);
  CHECK(again.from_store);
  CHECK(stat_value(client, "compiles") == 1);
}

TEST_CASE("compile link: another nvJitLink build or a cuLink session is refused as linker, nothing compiled") {
  TempDir dir;
  DaemonProcess daemon(dir);
  daemon.start();
  auto client = daemon.client();
  const CompileAnswer other = compile(client, LinkRequest(proto::nvjitlink_driver_id(13, 0, 1)).request);
  CHECK(other.kind == CompileAnswer::Kind::cannot_compile);
  CHECK_THAT(other.message, Catch::StartsWith("linker:"));
  LinkRequest culink(this_nvjitlink(), proto::cu_link_option_text(proto::default_option_text()));
  const CompileAnswer driver = compile(client, culink.request);
  CHECK(driver.kind == CompileAnswer::Kind::cannot_compile);
  CHECK_THAT(driver.message, Catch::StartsWith("linker:"));
  CHECK(stat_value(client, "compiles") == 0);
  CHECK(stat_value(client, "compile_refused") == 2);
}

TEST_CASE("compile link: inputs over compile_max_ptx together are too large, an empty input a bad request") {
  TempDir dir;
  jitcache::testing::DaemonOptions options;
  options.extra_args = {"--compile-max-ptx", "1MiB"};
  DaemonProcess daemon(dir, options);
  daemon.start();
  auto client = daemon.client();
  // Each input within the limit, both together over it.
  LinkRequest link;
  const std::string library((1u << 20) - 100, 'x');
  link.request.link_inputs[1] = {proto::LinkInputKind::library, proto::as_bytes(library)};
  auto too_large = client.compile(link.request, 10s);
  REQUIRE_FALSE(too_large);
  CHECK(too_large.error().reply_status == static_cast<std::uint16_t>(proto::Status::too_large));
  LinkRequest empty;
  empty.request.link_inputs[1].data = {};
  auto bad = client.compile(empty.request, 10s);
  REQUIRE_FALSE(bad);
  CHECK(bad.error().reply_status == static_cast<std::uint16_t>(proto::Status::bad_request));
  CHECK(client.ping());
}
