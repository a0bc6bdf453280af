#include <client/cli/fat_binary_keys.hpp>

#include <array>
#include <cstdint>
#include <cstring>
#include <fstream>

#include <client/cli/warm_sources.hpp>
#include <client/src/driver/driver_identity.hpp>
#include <client/src/fatbin/fatbin_format.hpp>
#include <client/src/key/key_builder.hpp>
#include <client/src/key/ptx_header.hpp>
#include <proto/messages.hpp>

namespace jitcache::client::cli {

namespace {

common::Error usage_error(std::string message) {
  return common::make_error(common::ErrorCode::invalid_argument, std::move(message));
}

}  // namespace

bool is_fat_binary_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::array<char, 4> head{};
  if (!in.read(head.data(), head.size())) return false;
  std::uint32_t magic = 0;
  std::memcpy(&magic, head.data(), sizeof magic);
  return magic == fatbin::k_container_magic;
}

common::Result<std::vector<FatBinaryKey>> fat_binary_keys(const KeyInput& input) {
  JITCACHE_TRY(check_arch(input.arch));
  const auto sm = key::parse_sm_arch(input.arch);
  if (!sm) return usage_error("--arch \"" + input.arch + "\" is not of the form sm_<digits>[a|f]");
  auto driver_id = proto::parse_driver_id(input.driver);
  if (!driver_id) return usage_error("--driver: " + driver_id.error().message);
  if (auto valid = key::KeyBuilder::options_from_text(input.options, {}); !valid) {
    return usage_error("--options: " + valid.error().message);
  }

  const driver::ComputeCapability device{sm->major(), sm->minor()};
  const auto isa = driver::max_ptx_isa(static_cast<int>(driver_id->api));
  const WarmTarget target{device, {isa.major, isa.minor}};
  const auto builder = key::KeyBuilder::for_device(device, *driver_id);

  std::vector<FatBinaryKey> keys;
  std::string why_none;
  WarmTally tally;
  common::Result<void> failure;
  visit_warm_sources(WarmFile{input.source_path, WarmFileKind::image, true, {}}, target, tally,
                     [&](WarmSource&& source) {
                       if (!failure) return;
                       if (!source.error.empty()) {
                         if (why_none.empty()) why_none = source.label + ": " + source.error;
                         return;
                       }
                       auto options = key::KeyBuilder::options_from_text(input.options, source.embedded);
                       if (!options) {
                         failure = usage_error(source.label + ": " + options.error().message);
                         return;
                       }
                       auto built = builder.build(source.ptx, *options);
                       if (!built) {
                         failure = usage_error(source.label + ": invalid key: " + built.error().message);
                         return;
                       }
                       keys.push_back(FatBinaryKey{source.label, built->complete()});
                     });
  JITCACHE_TRY(failure);
  if (keys.empty()) {
    return usage_error(input.source_path + ": no PTX a load on " + input.arch + " would JIT-compile" +
                       (why_none.empty() ? std::string() : " (" + why_none + ")"));
  }
  return keys;
}

}  // namespace jitcache::client::cli
