// The load flow's library target (client/src/loader/library_target.hpp), against a scripted driver:
// a cached cubin goes to cuLibraryLoadData with the caller's options and is kept for as long as the
// driver may read it, a bad one is caught by the probe, and devices of two generations key nothing.
#include <catch2/catch.hpp>

#include <cstdint>
#include <vector>

#include <client/src/loader/caller_options.hpp>
#include <client/src/loader/library_target.hpp>
#include <client/src/loader/preserved_images.hpp>

#include <tests/support/scripted_driver.hpp>

using jitcache::client::loader::CallerOptions;
using jitcache::client::loader::common_device_capability;
using jitcache::client::loader::LibraryOptions;
using jitcache::client::loader::LibraryTarget;
using jitcache::client::loader::preserved_image_count;
using jitcache::client::loader::release_preserved_image;
using jitcache::testing::ScriptedDriver;

namespace {

const std::vector<std::uint8_t> k_cubin = {0x7f, 'E', 'L', 'F', 2, 1, 1, 0x33};

}  // namespace

TEST_CASE("library target: a preserved binary is handed over as a copy that lives until cuLibraryUnload") {
  ScriptedDriver& script = ScriptedDriver::reset();
  script.probe_bytes = k_cubin.size();
  const auto api = ScriptedDriver::api();
  CUlibraryOption library_options[] = {CU_LIBRARY_BINARY_IS_PRESERVED};
  void* library_values[] = {reinterpret_cast<void*>(1)};
  CallerOptions jit(0, nullptr, nullptr);
  CUlibrary library = nullptr;
  LibraryTarget target(api, &library, jit, LibraryOptions{library_options, library_values, 1});
  const std::size_t kept_before = preserved_image_count();
  {
    std::vector<std::uint8_t> reply = k_cubin;  // the reply's memory, gone after the load
    REQUIRE(target.load_cubin(reply.data(), reply.size()) == CUDA_SUCCESS);
    REQUIRE(script.library_loads.size() == 1);
    CHECK(script.library_loads[0].code != reply.data());
    CHECK(script.library_loads[0].first_bytes == k_cubin);
    CHECK(script.library_loads[0].library_options == 1);
  }
  CHECK(preserved_image_count() == kept_before + 1);
  release_preserved_image(library);
  CHECK(preserved_image_count() == kept_before);
}

TEST_CASE("library target: without CU_LIBRARY_BINARY_IS_PRESERVED the driver copies and nothing is kept") {
  ScriptedDriver::reset();
  const auto api = ScriptedDriver::api();
  CallerOptions jit(0, nullptr, nullptr);
  CUlibrary library = nullptr;
  LibraryTarget target(api, &library, jit, LibraryOptions{});
  const std::size_t kept_before = preserved_image_count();
  std::vector<std::uint8_t> reply = k_cubin;
  REQUIRE(target.load_cubin(reply.data(), reply.size()) == CUDA_SUCCESS);
  CHECK(ScriptedDriver::instance().library_loads.at(0).code == reply.data());
  CHECK(preserved_image_count() == kept_before);
}

TEST_CASE("library target: an image the driver cannot use is caught by the kernel-count probe and unloaded") {
  ScriptedDriver& script = ScriptedDriver::reset();
  script.kernel_count_result = CUDA_ERROR_NO_BINARY_FOR_GPU;
  const auto api = ScriptedDriver::api();
  CallerOptions jit(0, nullptr, nullptr);
  CUlibrary library = nullptr;
  LibraryTarget target(api, &library, jit, LibraryOptions{});
  CHECK(target.load_cubin(k_cubin.data(), k_cubin.size()) == CUDA_ERROR_NO_BINARY_FOR_GPU);
  CHECK(library == nullptr);
  CHECK(script.unloaded_libraries.size() == 1);
}

TEST_CASE("library target: devices of different compute capability key no library, and one generation keys its own") {
  ScriptedDriver& script = ScriptedDriver::reset();
  script.devices = {{9, 0}, {8, 0}};
  const auto api = ScriptedDriver::api();
  auto mixed = common_device_capability(api);
  REQUIRE_FALSE(mixed);
  CHECK_THAT(mixed.error().message, Catch::Contains("90 and 80"));
  script.devices = {{9, 0}, {9, 0}};
  auto same = common_device_capability(api);
  REQUIRE(same);
  CHECK(same->sm() == 90);
}
