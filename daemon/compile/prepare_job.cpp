#include <daemon/compile/prepare_job.hpp>

#include <optional>
#include <string_view>
#include <utility>

#include <common/result.hpp>
#include <daemon/compile/option_mapping.hpp>
#include <daemon/compile/ptx_version.hpp>
#include <proto/jit_options.hpp>

namespace jitcache::daemon::compile {

namespace {

std::string driver_text(std::uint32_t api) {
  return std::to_string(api / 1000) + "." + std::to_string((api % 1000) / 10) + " (" + std::to_string(api) + ")";
}

std::optional<Refusal> check_toolkit(const CompileInput& input, ToolkitVersion toolkit) {
  const std::string name = producer_name(toolkit);
  const auto max_isa = max_ptx_isa(toolkit);
  if (!max_isa) {
    return Refusal{RefusalReason::unknown_toolkit,
                   name +
                       " is not in this daemon's tables of PTX versions and archs, so it cannot tell what it "
                       "would compile faithfully"};
  }
  // Rationale: a cubin from toolkit major N needs a driver of major >= N (minor version
  // compatibility holds only within a major, docs/driver-facts.md §2); an older driver would not load it.
  if (input.driver_api / 1000 < toolkit.major) {
    return Refusal{RefusalReason::driver_too_old,
                   "the client's driver API " + driver_text(input.driver_api) + " is older than " + name + " (major " +
                       std::to_string(toolkit.major) + "), whose cubins it could not load"};
  }
  const auto isa = read_ptx_isa(std::string_view(reinterpret_cast<const char*>(input.ptx.data()), input.ptx.size()));
  if (isa && *isa > *max_isa) {
    return Refusal{RefusalReason::ptx_version, "PTX .version " + to_string(*isa) + " is newer than " + name +
                                                   " reads (up to " + to_string(*max_isa) + ")"};
  }
  const auto targets = can_target(toolkit, input.arch);
  if (!targets) {
    return Refusal{RefusalReason::unknown_toolkit, "the archs " + name + " can target are not in this daemon's tables"};
  }
  if (!*targets) {
    return Refusal{RefusalReason::arch, name + " cannot generate code for " + input.arch};
  }
  return std::nullopt;
}

// Rationale: a link's image is handed to the program itself (cuLinkComplete, nvJitLinkGetLinkedCubin),
// so the daemon links only what its nvJitLink produces byte for byte: a session of the same library
// build (the key's driver field, proto/linker_identity.hpp), with the same options. A cuLink* session
// is linked by the driver's JIT (another ptxas build, per-input options nvJitLink has no place for),
// so it is never the daemon's.
common::Result<PreparedJob> prepare_link_job(const CompileInput& input, ToolkitVersion toolkit,
                                             const std::optional<proto::DriverId>& linker) {
  if (proto::link_flavor(input.options) != proto::LinkFlavor::nvjitlink) {
    return PreparedJob{Refusal{RefusalReason::linker,
                               "only nvJitLink links are linked by the daemon; a cuLink* session is the driver's JIT"}};
  }
  const std::string asked = std::to_string(input.driver_api) + "/" + input.driver_build;
  if (!linker) {
    return PreparedJob{
        Refusal{RefusalReason::linker, "this daemon's compile worker did not report its nvJitLink build"}};
  }
  if (linker->api != input.driver_api || linker->build != input.driver_build) {
    return PreparedJob{Refusal{RefusalReason::linker, "the link ran on nvJitLink " + asked + ", the daemon has " +
                                                          std::to_string(linker->api) + "/" + linker->build}};
  }
  const auto targets = can_target(toolkit, input.arch);
  if (!targets) {
    return PreparedJob{Refusal{RefusalReason::unknown_toolkit,
                               "the archs " + producer_name(toolkit) + " can target are not in this daemon's tables"}};
  }
  if (!*targets)
    return PreparedJob{
        Refusal{RefusalReason::arch, producer_name(toolkit) + " cannot generate code for " + input.arch}};
  auto options = proto::nvjitlink_options_of(input.options);
  JITCACHE_TRY(options);
  CompileJob job;
  job.arch = input.arch;
  job.nvjitlink_options = std::move(*options);
  job.link_inputs.reserve(input.link_inputs.size());
  for (const proto::CompileLinkInput& part : input.link_inputs) {
    job.link_inputs.push_back(LinkJobInput{part.kind, std::vector<std::uint8_t>(part.data.begin(), part.data.end())});
  }
  return PreparedJob{std::move(job)};
}

}  // namespace

common::Result<PreparedJob> prepare_job(const CompileInput& input, ToolkitVersion toolkit,
                                        const std::optional<proto::DriverId>& linker) {
  if (input.nvrtc != nullptr) {
    CompileJob job;
    job.arch = input.arch;
    job.nvrtc = *input.nvrtc;
    return PreparedJob{std::move(job)};
  }
  if (!input.link_inputs.empty()) return prepare_link_job(input, toolkit, linker);
  if (auto refusal = check_toolkit(input, toolkit)) return PreparedJob{std::move(*refusal)};
  auto mapped = map_options(input.options);
  JITCACHE_TRY(mapped);
  if (mapped->refusal) return PreparedJob{std::move(*mapped->refusal)};
  CompileJob job;
  job.arch = input.arch;
  job.nvjitlink_options = std::move(mapped->nvjitlink_options);
  job.ptx.assign(input.ptx.begin(), input.ptx.end());
  return PreparedJob{std::move(job)};
}

}  // namespace jitcache::daemon::compile
