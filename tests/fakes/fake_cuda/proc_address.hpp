// cuGetProcAddress semantics (docs/driver-facts.md §5): a base name and a CUDA version pick one ABI version of
// an entry point.
//
//   symbol unknown or hidden (FAKE_CUDA_HIDE)      → CUDA_SUCCESS, status SYMBOL_NOT_FOUND, pfn NULL
//   cudaVersion below the entry's first version     → CUDA_SUCCESS, status VERSION_NOT_SUFFICIENT, pfn NULL
//   cudaVersion above the driver's own version      → CUDA_ERROR_INVALID_VALUE
//   otherwise the newest ABI version introduced at or before cudaVersion (cuLinkCreate at 6050 is
//   cuLinkCreate_v2, at 5050 the plain cuLinkCreate).
// Flags (docs/driver-facts.md §5): CU_GET_PROC_ADDRESS_DEFAULT and _LEGACY_STREAM search the legacy
// ABIs only; _PER_THREAD_DEFAULT_STREAM prefers a per-thread one (cuLaunchKernel_ptsz) and falls back
// to the legacy one where there is none. [I] DEFAULT is LEGACY here: only the caller's compile flags
// make it per-thread, and those are folded into the flags by cuda.h's inline wrapper. Both bits set
// count as per-thread [I]; any other bit is CUDA_ERROR_INVALID_VALUE.
// The CUDA 11.3 form has no status argument: there a miss of either kind is CUDA_ERROR_NOT_FOUND.
// Thread safety: pure function over a constant table.
#pragma once

#include <cuda.h>

#include <set>
#include <span>
#include <string>
#include <string_view>

namespace jitcache::fakes::fake_cuda {

struct EntryPointVersion {
  int since = 0;  // the CUDA version (1000 * major + 10 * minor) that introduced this ABI
  void* function = nullptr;
  bool per_thread_stream = false;  // a _ptsz / _ptds ABI
};

struct EntryPoint {
  std::string_view name;
  std::span<const EntryPointVersion> versions;  // ascending by `since` within each stream kind
};

CUresult resolve_proc_address(std::span<const EntryPoint> table, const char* symbol, void** pfn, int cuda_version,
                              cuuint64_t flags, CUdriverProcAddressQueryResult* status, int driver_version,
                              const std::set<std::string, std::less<>>& hidden);

}  // namespace jitcache::fakes::fake_cuda
