// The key builder (client/src/key/key_builder.hpp, image_source.hpp) against known answers: fixed
// inputs from tests/data give exact key ids. The ids were computed by the code the builder replaced
// (the load flow's, `jitcache warm`'s and `jitcache put`'s own key assembly, before commit 817188c), so a
// change here is a change of every stored entry's key: bump proto::k_key_schema_version instead.
#include <client/src/driver/driver_identity.hpp>
#include <client/src/key/image_source.hpp>
#include <client/src/key/key_builder.hpp>
#include <client/src/loader/caller_options.hpp>

#include <catch2/catch.hpp>

#include <cstdint>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace key = jitcache::client::key;
namespace proto = jitcache::proto;
namespace common = jitcache::common;
using jitcache::client::driver::ComputeCapability;
using jitcache::client::loader::CallerOptions;
using jitcache::client::loader::OptionArrays;

namespace {

const proto::DriverId k_driver{13000, "580.159.04"};
const ComputeCapability k_h200{9, 0};

std::string read_data(const std::string& name) {
  std::ifstream in(std::string(JITCACHE_TEST_DATA_DIR) + "/" + name, std::ios::binary);
  REQUIRE(in.good());
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// What the load flow builds for `image` on `device` with the caller's option arrays.
struct FlowKey {
  std::string key_id;
  std::string fast_key_id;
  std::string arch;
};

FlowKey flow_key(const std::string& image, const ComputeCapability& device, unsigned count = 0,
                 CUjit_option* options = nullptr, void** values = nullptr) {
  const auto isa = jitcache::client::driver::max_ptx_isa(static_cast<int>(k_driver.api));
  const key::ImageSource source =
      key::find_source(image.c_str(), [&] { return std::optional(device); }, {isa.major, isa.minor});
  REQUIRE_FALSE(source.none.has_value());
  const auto builder = key::KeyBuilder::for_device(device, k_driver);
  REQUIRE(builder.check_ptx_version(source.ptx.text()).ok());
  CallerOptions caller(count, options, values);
  OptionArrays all = caller.with(source.ptx.embedded, false);
  auto canonical = key::KeyBuilder::options_from_jit(all.count(), all.options_data(), all.values_data());
  REQUIRE(canonical.ok());
  auto built = builder.build(source.ptx.text(), *canonical);
  REQUIRE(built.ok());
  built->start_digest();
  const proto::KeyFields& fields = built->complete();
  return {proto::to_hex(proto::key_id(fields)), proto::to_hex(proto::fast_key_id(built->fast_key())), fields.arch};
}

// What `jitcache warm --arch` builds for a source it found (warm_sources.cpp walks with find_source).
std::string warm_key_id(const std::string& image, const ComputeCapability& device, const std::string& option_text) {
  const key::ImageSource source = key::find_source(image.c_str(), [&] { return std::optional(device); }, {9, 0});
  REQUIRE_FALSE(source.none.has_value());
  auto canonical = key::KeyBuilder::options_from_text(option_text, source.ptx.embedded);
  REQUIRE(canonical.ok());
  auto built = key::KeyBuilder::for_device(device, k_driver).build(source.ptx.text(), *canonical);
  REQUIRE(built.ok());
  return proto::to_hex(proto::key_id(built->complete()));
}

// What `jitcache put/get --source --arch` builds: the file's bytes, the arch as typed.
FlowKey named_arch_key(const std::string& bytes, const std::string& arch, const std::string& option_text) {
  auto canonical = key::KeyBuilder::options_from_text(option_text, {});
  REQUIRE(canonical.ok());
  auto built = key::KeyBuilder::for_arch(arch, k_driver).build(bytes, *canonical);
  REQUIRE(built.ok());
  const proto::KeyFields& fields = built->complete();
  return {proto::to_hex(proto::key_id(fields)), proto::to_hex(proto::fast_key_id(built->fast_key())), fields.arch};
}

}  // namespace

TEST_CASE("key builder: the load flow's keys of the corpus PTX are the known answers") {
  const std::string small = read_data("small_kernel.ptx");
  const FlowKey h200 = flow_key(small, k_h200);
  CHECK(h200.arch == "sm_90a");
  CHECK(h200.key_id == "25ef36cce2295eb7859a3662b2f3bfeaa446e73a95be3fb9c721bee9c7dad2b4");
  CHECK(h200.fast_key_id == "15d9fe4b54697d20034e298b6d2de5ed90e8c702015fa64417fd15554fa764b7");
  CHECK(flow_key(small, {8, 0}).key_id == "eeb8101dc33df8911ba3de8e1966cc2e8f5be7758f03dd5cbe8b964f91e15dee");
  CHECK(flow_key(small, {10, 0}).arch == "sm_100a");
  CHECK(flow_key(small, {10, 0}).key_id == "b62fb102c86609b8217a8e77f731d98628e7778464ba04ccf59f203072cced70");
  // A PTX of several digest chunks (366 KB): the content digest's threads give the same answer.
  CHECK(flow_key(read_data("mid_kernels.ptx"), k_h200).key_id ==
        "33b55d081e5a90ada67bf979e07ec7362d053c9e57ce5a966d4e39e28a706420");
}

TEST_CASE("key builder: the caller's options and CU_JIT_TARGET give the known answers") {
  const std::string small = read_data("small_kernel.ptx");
  CUjit_option tuned[] = {CU_JIT_OPTIMIZATION_LEVEL, CU_JIT_MAX_REGISTERS};
  void* tuned_values[] = {reinterpret_cast<void*>(std::uintptr_t{3}), reinterpret_cast<void*>(std::uintptr_t{32})};
  CHECK(flow_key(small, k_h200, 2, tuned, tuned_values).key_id ==
        "280b5f451be089f47e9f98d588ecd1748cabbdb3fd504eaa0c424d285674c7ed");
  // CU_JIT_TARGET 80 on an H200 is the sm_80 key, the same as an A100's own.
  CUjit_option target[] = {CU_JIT_TARGET};
  void* target_values[] = {reinterpret_cast<void*>(std::uintptr_t{80})};
  const FlowKey targeted = flow_key(small, k_h200, 1, target, target_values);
  CHECK(targeted.arch == "sm_80");
  CHECK(targeted.key_id == "eeb8101dc33df8911ba3de8e1966cc2e8f5be7758f03dd5cbe8b964f91e15dee");
  // Log options change no code: the key of no options at all.
  char log[64];
  CUjit_option logs[] = {CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES};
  void* log_values[] = {log, reinterpret_cast<void*>(sizeof(log))};
  CHECK(flow_key(small, k_h200, 2, logs, log_values).key_id == flow_key(small, k_h200).key_id);
}

TEST_CASE("key builder: a fat binary's PTX entry is keyed with its embedded ptxas options") {
  // nvcc -fatbin -gencode=arch=compute_90,code=compute_90 -Xptxas=-O2,--generate-line-info
  // tests/data/fatbin_kernel.cu (CUDA 13.0), checked in so its answer stays fixed.
  const std::string fat = read_data("fatbin_kernel_compute90_options.fatbin");
  const FlowKey h200 = flow_key(fat, k_h200);
  CHECK(h200.arch == "sm_90a");
  CHECK(h200.key_id == "67aac211d930b5d8fe6c3e631c1029146250d2d9256e2856ed5904e7b56c4629");
  CHECK(warm_key_id(fat, k_h200, "") == h200.key_id);
}

TEST_CASE("key builder: jitcache warm's keys equal the load flow's for the same device") {
  const std::string small = read_data("small_kernel.ptx");
  CHECK(warm_key_id(small, k_h200, "") == "25ef36cce2295eb7859a3662b2f3bfeaa446e73a95be3fb9c721bee9c7dad2b4");
  CHECK(warm_key_id(small, k_h200, "opt=3;maxrreg=32") ==
        "280b5f451be089f47e9f98d588ecd1748cabbdb3fd504eaa0c424d285674c7ed");
  CHECK(warm_key_id(small, {8, 0}, "") == "eeb8101dc33df8911ba3de8e1966cc2e8f5be7758f03dd5cbe8b964f91e15dee");
}

TEST_CASE("key builder: an arch named outright is kept as named, with the known answers") {
  const std::string small = read_data("small_kernel.ptx");
  const FlowKey plain = named_arch_key(small, "sm_90", "");
  CHECK(plain.arch == "sm_90");  // not sm_90a: put and get key exactly what they are told
  CHECK(plain.key_id == "f56c861d86abd00a27b736e0661d27919027a465e14c8722baadb8fe6e6414e9");
  CHECK(plain.fast_key_id == "0c73c7602fba163239c4f1b05af8693f1d44a4a115eda474e3d9a17c2e69ce80");
  const FlowKey specific = named_arch_key(small, "sm_90a", "");
  CHECK(specific.key_id == "25ef36cce2295eb7859a3662b2f3bfeaa446e73a95be3fb9c721bee9c7dad2b4");
  CHECK(specific.fast_key_id == "15d9fe4b54697d20034e298b6d2de5ed90e8c702015fa64417fd15554fa764b7");
  const FlowKey tuned = named_arch_key(small, "sm_90a", "opt=3;maxrreg=32");
  CHECK(tuned.key_id == "280b5f451be089f47e9f98d588ecd1748cabbdb3fd504eaa0c424d285674c7ed");
  CHECK(tuned.fast_key_id == "78afb20dc6f6de3f0f8fc9c005c10789aac9a2d3ee23b64eb6d9f700bf89bb6d");
}

TEST_CASE("key builder: the content digest is the same whether computed in the background or on the spot") {
  const std::string mid = read_data("mid_kernels.ptx");
  auto canonical = key::KeyBuilder::options_from_text("", {});
  REQUIRE(canonical.ok());
  const auto builder = key::KeyBuilder::for_device(k_h200, k_driver);
  auto background = builder.build(mid, *canonical);
  auto on_the_spot = builder.build(mid, *canonical);
  REQUIRE(background.ok());
  REQUIRE(on_the_spot.ok());
  background->start_digest();
  CHECK(background->fields().content == proto::Digest256{});  // not filled in before complete()
  CHECK(background->complete() == on_the_spot->complete());
  CHECK(on_the_spot->complete().content == proto::content_digest(proto::as_bytes(mid)));
}

TEST_CASE("key builder: PTX newer than the driver JIT-compiles, and options it cannot key, are refused with why") {
  const auto builder = key::KeyBuilder::for_device(k_h200, k_driver);
  auto newer = builder.check_ptx_version(".version 9.9\n.target sm_90\n");
  REQUIRE_FALSE(newer.ok());
  CHECK(newer.error().message == "PTX ISA 9.9 is newer than this driver (API 13000) JIT-compiles (9.0)");
  CHECK(builder.check_ptx_version(".version 9.0\n.target sm_90\n").ok());
  CHECK(builder.check_ptx_version("no version directive").ok());

  CUjit_option relocating[] = {CU_JIT_GLOBAL_SYMBOL_COUNT};
  void* relocating_values[] = {reinterpret_cast<void*>(std::uintptr_t{1})};
  auto uncacheable = key::KeyBuilder::options_from_jit(1, relocating, relocating_values);
  REQUIRE_FALSE(uncacheable.ok());
  CHECK(uncacheable.error().code == common::ErrorCode::unsupported);
  CHECK_THAT(uncacheable.error().message, Catch::Contains("CU_JIT_GLOBAL_SYMBOL_COUNT"));

  auto both = key::KeyBuilder::options_from_text("opt=3", {{CU_JIT_OPTIMIZATION_LEVEL, 2}});
  REQUIRE_FALSE(both.ok());
  CHECK(both.error().code == common::ErrorCode::unsupported);
  auto typo = key::KeyBuilder::options_from_text("optt=3", {});
  REQUIRE_FALSE(typo.ok());
  CHECK(typo.error().code == common::ErrorCode::invalid_argument);

  // A named arch that is no arch never becomes a key.
  auto canonical = key::KeyBuilder::options_from_text("", {});
  REQUIRE(canonical.ok());
  auto bad_arch = key::KeyBuilder::for_arch("compute_90", k_driver).build("ptx", *canonical);
  REQUIRE_FALSE(bad_arch.ok());
  CHECK(bad_arch.error().code == common::ErrorCode::invalid_argument);
}
