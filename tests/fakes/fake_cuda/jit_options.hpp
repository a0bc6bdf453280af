// The CUjit_option arrays of cuModuleLoadDataEx and cuLink*, read as the driver reads them and turned
// into nvJitLink options; and the output slots (log sizes, wall time) written back as the driver does.
//
// Values travel in the void* slots by value (docs/driver-facts.md §1 "How option values are passed"). Mapping to
// nvJitLink (docs/driver-facts.md §2, §8): OPTIMIZATION_LEVEL N → -Xptxas=-ON (nvJitLink's own -O takes only 0
// and 3), MAX_REGISTERS → -maxrregcount=N, GENERATE_DEBUG_INFO → -g, GENERATE_LINE_INFO → -lineinfo,
// LOG_VERBOSE → -verbose, CACHE_MODE → -Xptxas=-dlcm=…, TARGET → -arch. Other known options are accepted
// and change nothing; an option number past CU_JIT_NUM_OPTIONS is CUDA_ERROR_INVALID_VALUE.
// Log slots: the *_SIZE_BYTES slot is the capacity in, NUL included; out, the bytes of text written
// (without the NUL) [I: the documentation says "amount of log buffer filled"].
// Thread safety: JitRequest is owned by one call; writing into the caller's slots is the caller's
// memory, used as the driver would.
#pragma once

#include <client/src/fatbin/fatbin_entry.hpp>

#include <cuda.h>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace jitcache::fakes::fake_cuda {

namespace fb = jitcache::client::fatbin;

struct LogSlot {
  char* buffer = nullptr;
  unsigned capacity = 0;       // from the IN value of the size slot
  void** size_slot = nullptr;  // where the OUT value goes
};

struct JitRequest {
  std::optional<fb::Arch> target;             // CU_JIT_TARGET; absent: the context's arch
  std::vector<std::string> compiler_options;  // for nvJitLink, without -arch
  bool fallback_strategy_given = false;
  LogSlot info_log;
  LogSlot error_log;
  void** wall_time_slot = nullptr;
};

// CUDA_SUCCESS, or CUDA_ERROR_INVALID_VALUE for a bad array, an unknown option or a value out of range.
CUresult parse_jit_options(unsigned count, const CUjit_option* options, void** values, JitRequest& out);

// CU_JIT_TARGET's value (CU_TARGET_COMPUTE_90, …_90A = 90 + 0x10000, …_100F = 100 + 0x20000).
std::optional<fb::Arch> arch_from_jit_target(unsigned long long value);

// Copies as much of `text` as fits (NUL-terminated) and stores the length written in the size slot.
void write_log(const LogSlot& slot, std::string_view text);
// The float bit pattern of `milliseconds` in the low 32 bits of the slot, as the driver stores it.
void write_wall_time(void** slot, float milliseconds);

}  // namespace jitcache::fakes::fake_cuda
