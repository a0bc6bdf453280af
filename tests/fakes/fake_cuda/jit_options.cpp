#include <tests/fakes/fake_cuda/jit_options.hpp>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>

namespace jitcache::fakes::fake_cuda {
namespace {

unsigned long long integer(void* slot) {
  return static_cast<unsigned long long>(reinterpret_cast<std::uintptr_t>(slot));
}

// Rationale: sm_30 … sm_121 are the targets cuda.h lists; anything outside is not a target.
bool plausible_sm(unsigned sm) { return sm >= 30 && sm <= 199; }

}  // namespace

std::optional<fb::Arch> arch_from_jit_target(unsigned long long value) {
  fb::Arch arch;
  if (value >= CU_COMPUTE_FAMILY_TARGET_BASE) {
    arch.variant = fb::ArchVariant::family;
    value -= CU_COMPUTE_FAMILY_TARGET_BASE;
  } else if (value >= CU_COMPUTE_ACCELERATED_TARGET_BASE) {
    arch.variant = fb::ArchVariant::arch_specific;
    value -= CU_COMPUTE_ACCELERATED_TARGET_BASE;
  }
  if (value > 0xFFFF || !plausible_sm(static_cast<unsigned>(value))) return std::nullopt;
  arch.sm = static_cast<unsigned>(value);
  return arch;
}

CUresult parse_jit_options(unsigned count, const CUjit_option* options, void** values, JitRequest& out) {
  if (count != 0 && (options == nullptr || values == nullptr)) return CUDA_ERROR_INVALID_VALUE;
  for (unsigned i = 0; i < count; ++i) {
    void*& slot = values[i];
    const unsigned long long value = integer(slot);
    switch (options[i]) {
      case CU_JIT_MAX_REGISTERS:
        out.compiler_options.push_back("-maxrregcount=" + std::to_string(static_cast<unsigned>(value)));
        break;
      case CU_JIT_OPTIMIZATION_LEVEL:
        if (static_cast<unsigned>(value) > 4) return CUDA_ERROR_INVALID_VALUE;
        out.compiler_options.push_back("-Xptxas=-O" + std::to_string(static_cast<unsigned>(value)));
        break;
      case CU_JIT_TARGET: {
        const auto arch = arch_from_jit_target(static_cast<unsigned>(value));
        if (!arch) return CUDA_ERROR_INVALID_VALUE;
        out.target = arch;
        break;
      }
      case CU_JIT_TARGET_FROM_CUCONTEXT: out.target.reset(); break;
      case CU_JIT_FALLBACK_STRATEGY:
        if (static_cast<unsigned>(value) > CU_PREFER_BINARY) return CUDA_ERROR_INVALID_VALUE;
        out.fallback_strategy_given = true;
        break;
      case CU_JIT_GENERATE_DEBUG_INFO:
        if (static_cast<int>(value) != 0) out.compiler_options.emplace_back("-g");
        break;
      case CU_JIT_GENERATE_LINE_INFO:
        if (static_cast<int>(value) != 0) out.compiler_options.emplace_back("-lineinfo");
        break;
      case CU_JIT_LOG_VERBOSE:
        if (static_cast<int>(value) != 0) out.compiler_options.emplace_back("-verbose");
        break;
      case CU_JIT_CACHE_MODE:
        if (static_cast<unsigned>(value) == CU_JIT_CACHE_OPTION_CG)
          out.compiler_options.emplace_back("-Xptxas=-dlcm=cg");
        if (static_cast<unsigned>(value) == CU_JIT_CACHE_OPTION_CA)
          out.compiler_options.emplace_back("-Xptxas=-dlcm=ca");
        if (static_cast<unsigned>(value) > CU_JIT_CACHE_OPTION_CA) return CUDA_ERROR_INVALID_VALUE;
        break;
      case CU_JIT_INFO_LOG_BUFFER: out.info_log.buffer = static_cast<char*>(slot); break;
      case CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES:
        out.info_log.capacity = static_cast<unsigned>(value);
        out.info_log.size_slot = &slot;
        break;
      case CU_JIT_ERROR_LOG_BUFFER: out.error_log.buffer = static_cast<char*>(slot); break;
      case CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES:
        out.error_log.capacity = static_cast<unsigned>(value);
        out.error_log.size_slot = &slot;
        break;
      case CU_JIT_WALL_TIME: out.wall_time_slot = &slot; break;
      default:
        // Known options with no nvJitLink equivalent worth modelling (threads per block, symbol
        // relocation, deprecated LTO switches …) are accepted, as the driver accepts them.
        if (static_cast<unsigned>(options[i]) >= CU_JIT_NUM_OPTIONS) return CUDA_ERROR_INVALID_VALUE;
        break;
    }
  }
  return CUDA_SUCCESS;
}

void write_log(const LogSlot& slot, std::string_view text) {
  std::size_t written = 0;
  if (slot.buffer != nullptr && slot.capacity > 0) {
    written = std::min<std::size_t>(text.size(), slot.capacity - 1);
    std::memcpy(slot.buffer, text.data(), written);
    slot.buffer[written] = '\0';
  }
  if (slot.size_slot != nullptr) *slot.size_slot = reinterpret_cast<void*>(static_cast<std::uintptr_t>(written));
}

void write_wall_time(void** slot, float milliseconds) {
  if (slot == nullptr) return;
  const auto bits = std::bit_cast<std::uint32_t>(milliseconds);
  *slot = reinterpret_cast<void*>(static_cast<std::uintptr_t>(bits));
}

}  // namespace jitcache::fakes::fake_cuda
