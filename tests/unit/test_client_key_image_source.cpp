// The first stages of keying an image (client/src/key/image_source.hpp): classification and the
// fat binary walk find the PTX a load would JIT on a device, or say why there is none. The fat
// binaries are checked in (tests/data), so their entries stay what these cases expect.
#include <client/src/key/image_source.hpp>

#include <catch2/catch.hpp>

#include <cstdint>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

#include <tests/support/sample_cubin.hpp>

namespace key = jitcache::client::key;
using jitcache::client::driver::ComputeCapability;

namespace {

const ComputeCapability k_h200{9, 0};

std::string read_data(const std::string& name) {
  std::ifstream in(std::string(JITCACHE_TEST_DATA_DIR) + "/" + name, std::ios::binary);
  REQUIRE(in.good());
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

}  // namespace

TEST_CASE("image source: PTX is borrowed, a cubin and a fat binary with a cubin for the device have nothing to key") {
  const std::string small = read_data("small_kernel.ptx");
  int device_queries = 0;
  auto h200 = [&] {
    ++device_queries;
    return std::optional(k_h200);
  };
  const key::ImageSource ptx = key::find_source(small.c_str(), h200, {9, 0});
  REQUIRE_FALSE(ptx.none.has_value());
  CHECK(ptx.ptx.text().data() == small.data());  // no copy of the caller's PTX
  CHECK(ptx.ptx.text().size() == small.size());
  CHECK(device_queries == 0);  // plain PTX needs no device to be found

  // nvcc -fatbin "-gencode=arch=compute_90,code=[sm_90,compute_90]" tests/data/fatbin_kernel.cu
  const std::string fat = read_data("fatbin_kernel_sm90_compute90.fatbin");
  const key::ImageSource on_h200 = key::find_source(fat.c_str(), h200, {9, 0});
  CHECK(device_queries == 1);
  REQUIRE(on_h200.none.has_value());
  CHECK(*on_h200.none == key::NoSource::cubin_for_device);
  CHECK_THAT(on_h200.entry, Catch::Contains("sm_90"));
  // A device the cubin cannot run on (CC 10.0) takes the PTX, copied so it ends in a NUL.
  const key::ImageSource on_b200 = key::find_source(fat.c_str(),
                                                    [] {
                                                      return std::optional(ComputeCapability{10, 0});
                                                    },
                                                    {9, 0});
  REQUIRE_FALSE(on_b200.none.has_value());
  CHECK(on_b200.ptx.copy.has_value());
  CHECK(on_b200.ptx.nul_terminated()[on_b200.ptx.text().size()] == '\0');
  CHECK_THAT(on_b200.entry, Catch::Contains("compute_90 PTX"));
  // An A100 can use neither.
  const key::ImageSource on_a100 = key::find_source(fat.c_str(),
                                                    [] {
                                                      return std::optional(ComputeCapability{8, 0});
                                                    },
                                                    {9, 0});
  REQUIRE(on_a100.none.has_value());
  CHECK(*on_a100.none == key::NoSource::no_image_for_device);
  CHECK_FALSE(on_a100.detail.empty());
  // Without a device there is nothing to select.
  const key::ImageSource nowhere =
      key::find_source(fat.c_str(), [] { return std::optional<ComputeCapability>(); }, {9, 0});
  REQUIRE(nowhere.none.has_value());
  CHECK(*nowhere.none == key::NoSource::no_device);

  const std::vector<std::uint8_t> cubin = jitcache::testing::make_cubin(jitcache::testing::CubinSpec{}, 1, 0);
  const key::ImageSource elf = key::find_source(cubin.data(), h200, {9, 0});
  REQUIRE(elf.none.has_value());
  CHECK(*elf.none == key::NoSource::cubin);
  const key::ImageSource empty = key::find_source("", h200, {9, 0});
  REQUIRE(empty.none.has_value());
  CHECK(*empty.none == key::NoSource::unrecognised);
  CHECK_THAT(empty.detail, Catch::Contains("empty PTX"));
}

TEST_CASE("image source: a fat binary device target has arch-specific variants from CC 9.0, family ones from 10.0") {
  const auto a100 = key::device_target({8, 6});
  CHECK((a100.major == 8 && a100.minor == 6 && !a100.arch_specific && !a100.family));
  const auto h200 = key::device_target({9, 0});
  CHECK((h200.arch_specific && !h200.family));
  const auto b200 = key::device_target({10, 0});
  CHECK((b200.arch_specific && b200.family));
}
