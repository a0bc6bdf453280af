#include <tests/fakes/fake_cuda/proc_address.hpp>

namespace jitcache::fakes::fake_cuda {
namespace {

constexpr cuuint64_t k_known_flags = CU_GET_PROC_ADDRESS_LEGACY_STREAM | CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM;

CUresult miss(CUdriverProcAddressQueryResult* status, CUdriverProcAddressQueryResult why) {
  if (status == nullptr) return CUDA_ERROR_NOT_FOUND;
  *status = why;
  return CUDA_SUCCESS;
}

}  // namespace

CUresult resolve_proc_address(std::span<const EntryPoint> table, const char* symbol, void** pfn, int cuda_version,
                              cuuint64_t flags, CUdriverProcAddressQueryResult* status, int driver_version,
                              const std::set<std::string, std::less<>>& hidden) {
  if (symbol == nullptr || pfn == nullptr || (flags & ~k_known_flags) != 0) return CUDA_ERROR_INVALID_VALUE;
  *pfn = nullptr;
  if (cuda_version > driver_version) return CUDA_ERROR_INVALID_VALUE;
  const std::string_view name(symbol);
  if (hidden.contains(name)) return miss(status, CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND);
  for (const EntryPoint& entry : table) {
    if (entry.name != name) continue;
    const bool per_thread = (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) != 0;
    const EntryPointVersion* legacy = nullptr;
    const EntryPointVersion* per_thread_version = nullptr;
    for (const EntryPointVersion& version : entry.versions) {
      if (version.since > cuda_version) continue;
      (version.per_thread_stream ? per_thread_version : legacy) = &version;
    }
    const EntryPointVersion* chosen = per_thread && per_thread_version != nullptr ? per_thread_version : legacy;
    if (chosen == nullptr) return miss(status, CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT);
    *pfn = chosen->function;
    if (status != nullptr) *status = CU_GET_PROC_ADDRESS_SUCCESS;
    return CUDA_SUCCESS;
  }
  return miss(status, CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND);
}

}  // namespace jitcache::fakes::fake_cuda
