#include <tests/fakes/fake_cuda/ptx_jit.hpp>

#include <span>
#include <tuple>

namespace jitcache::fakes::fake_cuda {
namespace {

std::string isa_text(unsigned major, unsigned minor) { return std::to_string(major) + "." + std::to_string(minor); }

fb::DeviceTarget as_device(const fb::Arch& target) {
  return fb::DeviceTarget{target.major(), target.minor(), target.variant == fb::ArchVariant::arch_specific,
                          target.variant != fb::ArchVariant::plain};
}

}  // namespace

std::optional<JitFailure> check_ptx_version(const PtxHeader& header, const fb::PtxIsa& max_isa) {
  if (std::tie(header.version_major, header.version_minor) > std::tie(max_isa.major, max_isa.minor)) {
    return JitFailure{CUDA_ERROR_UNSUPPORTED_PTX_VERSION,
                      "ptxas application ptx input, line " + std::to_string(header.version_line) +
                          "; fatal   : Unsupported .version " + isa_text(header.version_major, header.version_minor) +
                          "; current version is '" + isa_text(max_isa.major, max_isa.minor) + "'"};
  }
  return std::nullopt;
}

std::optional<JitFailure> check_ptx_target(const PtxHeader& header, const fb::Arch& target) {
  if (header.target && !fb::ptx_targets(*header.target, as_device(target))) {
    if (header.target->variant != fb::ArchVariant::plain) {
      return JitFailure{CUDA_ERROR_INVALID_PTX, "ptxas fatal   : PTX with .target '" + fb::arch_name(*header.target) +
                                                    "' cannot be compiled for architecture '" + fb::arch_name(target) +
                                                    "'"};
    }
    return JitFailure{CUDA_ERROR_INVALID_PTX,
                      "ptxas fatal   : SM version specified by .target (" + fb::arch_name(*header.target) +
                          ") is higher than default SM version assumed (" + fb::arch_name(target) + ")"};
  }
  return std::nullopt;
}

CUresult result_for_nvjitlink(nvJitLinkResult result, bool ptx_input, std::string_view error_log) {
  switch (result) {
    case NVJITLINK_SUCCESS: return CUDA_SUCCESS;
    case NVJITLINK_ERROR_UNRECOGNIZED_OPTION:
    case NVJITLINK_ERROR_MISSING_ARCH:
    case NVJITLINK_ERROR_INCOMPATIBLE_OPTIONS: return CUDA_ERROR_INVALID_VALUE;
    default: break;
  }
  if (!ptx_input) return CUDA_ERROR_INVALID_IMAGE;
  if (error_log.find("Unsupported .version") != std::string_view::npos) return CUDA_ERROR_UNSUPPORTED_PTX_VERSION;
  return CUDA_ERROR_INVALID_PTX;
}

CompileOutcome compile_ptx(std::string_view ptx, const fb::Arch& target, const std::vector<std::string>& options) {
  CompileOutcome outcome;
  JitLinker linker(target, options);
  if (!linker.created()) {
    outcome.code = result_for_nvjitlink(linker.create_result(), true, {});
    outcome.error_log =
        "nvJitLinkCreate failed (" + std::to_string(linker.create_result()) + ") for " + nvjitlink_arch_option(target);
    return outcome;
  }
  const auto bytes = std::as_bytes(std::span(ptx.data(), ptx.size()));
  nvJitLinkResult result = linker.add(NVJITLINK_INPUT_PTX, bytes, "module.ptx");
  if (result == NVJITLINK_SUCCESS) result = linker.complete();
  outcome.info_log = linker.info_log();
  if (result != NVJITLINK_SUCCESS) {
    outcome.error_log = linker.error_log();
    if (outcome.error_log.empty()) outcome.error_log = "nvJitLink failed (" + std::to_string(result) + ")";
    outcome.code = result_for_nvjitlink(result, true, outcome.error_log);
    return outcome;
  }
  outcome.cubin = linker.cubin();
  return outcome;
}

}  // namespace jitcache::fakes::fake_cuda
