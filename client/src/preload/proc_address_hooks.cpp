// The driver's resolvers as the program sees them: cuGetProcAddress (the CUDA 11.3 form, without a
// status), cuGetProcAddress_v2 (12.0 on, and its _ptsz name), and dynamic cudart's
// cudaGetDriverEntryPoint{,ByVersion} (and their _ptsz names). Each asks the real resolver first and
// substitutes a wrapper only for a successful answer (symbol_routes.hpp route_proc_address), so a
// program that asks for "cuGetProcAddress" itself gets these hooks back, and one that asks at an old
// version gets that version's ABI or the real function — never a newer ABI than it asked for.
// Calls from this library itself (the client resolving the driver) get the real answers.
// Thread safety: lock-free.
#include <cuda.h>
#include <dlfcn.h>

#include <atomic>

#include <client/src/preload/hook.hpp>
#include <client/src/preload/real_symbols.hpp>
#include <client/src/preload/shim_link.hpp>
#include <client/src/preload/symbol_routes.hpp>

namespace jitcache::client::preload {

namespace {

using ProcAddressV1 = CUresult (*)(const char*, void**, int, cuuint64_t);
using ProcAddressV2 = CUresult (*)(const char*, void**, int, cuuint64_t, CUdriverProcAddressQueryResult*);
// cudart's status enum has the driver's values (cuda_runtime_api.h cudaDriverEntryPointQueryResult).
using EntryPoint = int (*)(const char*, void**, unsigned long long, int*);
using EntryPointByVersion = int (*)(const char*, void**, unsigned int, unsigned long long, int*);
using RuntimeVersion = int (*)(int*);

std::atomic<void*> g_v1{nullptr};
std::atomic<void*> g_v2{nullptr};
std::atomic<void*> g_v2_ptsz{nullptr};

extern const Hook k_proc_address_hooks[3];

// Rationale: cudart resolves hundreds of entry points at start, nearly none of them hooked; the
// name is looked at first (hooks_of_base turns a name away after a few characters), so such an
// answer is handed back after one compare.
bool substitutable(CUresult result, void** pfn, const char* symbol, const CUdriverProcAddressQueryResult* status) {
  return result == CUDA_SUCCESS && !hooks_of_base(symbol).empty() && pfn != nullptr && *pfn != nullptr &&
         (status == nullptr || *status == CU_GET_PROC_ADDRESS_SUCCESS);
}

CUresult resolve_v2(const Hook& hook, const void* caller, const char* symbol, void** pfn, int version, cuuint64_t flags,
                    CUdriverProcAddressQueryResult* status) {
  auto real = real_function<ProcAddressV2>(hook);
  if (real == nullptr) return CUDA_ERROR_NOT_INITIALIZED;
  const CUresult result = real(symbol, pfn, version, flags, status);
  if (substitutable(result, pfn, symbol, status) && !inside_preload(caller)) {
    *pfn = route_proc_address(symbol, *pfn, version);
  }
  return result;
}

// The real cudart's `name`: the next definition after this library, else the one in a cudart
// loaded where RTLD_NEXT does not look. Rationale: a Python extension opened with RTLD_LOCAL that
// links cudart binds its calls to this library's export (the global scope comes first), and its
// cudart is only in its local scope; that call must still reach a cudart.
void* real_cudart(const char* name) {
  if (void* found = shim().next_definition(name)) return found;
  for (const char* soname : {"libcudart.so.13", "libcudart.so.12", "libcudart.so.11.0"}) {
    void* library = ::dlopen(soname, RTLD_LAZY | RTLD_NOLOAD);
    if (library == nullptr) continue;
    void* found = real_dlsym(library, name);
    ::dlclose(library);
    if (found != nullptr) return found;
  }
  return nullptr;
}

// cudart asks at its own version; the driver's answer decides the ABI where it can (see
// route_proc_address), this only matters when the address is not one the driver exports.
int runtime_version() {
  static std::atomic<int> known{0};
  if (int v = known.load(std::memory_order_relaxed); v != 0) return v;
  int version = CUDA_VERSION;
  if (auto fn = reinterpret_cast<RuntimeVersion>(real_cudart("cudaRuntimeGetVersion"))) {
    int asked = 0;
    if (fn(&asked) == 0 && asked > 0) version = asked;
  }
  known.store(version, std::memory_order_relaxed);
  return version;
}

int entry_point(const char* name, const void* caller, const char* symbol, void** pfn, unsigned long long flags,
                int* status) {
  auto real = reinterpret_cast<EntryPoint>(real_cudart(name));
  if (real == nullptr) return 3;  // cudaErrorInitializationError: there is no cudart behind this one
  const int result = real(symbol, pfn, flags, status);
  if (result == 0 && pfn != nullptr && *pfn != nullptr && symbol != nullptr && (status == nullptr || *status == 0) &&
      !inside_preload(caller)) {
    *pfn = route_proc_address(symbol, *pfn, runtime_version());
  }
  return result;
}

int entry_point_by_version(const char* name, const void* caller, const char* symbol, void** pfn, unsigned int version,
                           unsigned long long flags, int* status) {
  auto real = reinterpret_cast<EntryPointByVersion>(real_cudart(name));
  if (real == nullptr) return 3;
  const int result = real(symbol, pfn, version, flags, status);
  if (result == 0 && pfn != nullptr && *pfn != nullptr && symbol != nullptr && (status == nullptr || *status == 0) &&
      !inside_preload(caller)) {
    *pfn = route_proc_address(symbol, *pfn, static_cast<int>(version));
  }
  return result;
}

}  // namespace

}  // namespace jitcache::client::preload

using jitcache::client::preload::k_proc_address_hooks;

extern "C" {
#pragma GCC visibility push(default)

CUresult jitcache_preload_cuGetProcAddress(const char* symbol, void** pfn, int version,
                                           cuuint64_t flags) __asm__("cuGetProcAddress");
CUresult jitcache_preload_cuGetProcAddress(const char* symbol, void** pfn, int version, cuuint64_t flags) {
  using namespace jitcache::client::preload;
  const void* caller = __builtin_return_address(0);
  auto real = real_function<ProcAddressV1>(k_proc_address_hooks[0]);
  if (real == nullptr) return CUDA_ERROR_NOT_INITIALIZED;
  const CUresult result = real(symbol, pfn, version, flags);
  if (substitutable(result, pfn, symbol, nullptr) && !inside_preload(caller)) {
    *pfn = route_proc_address(symbol, *pfn, version);
  }
  return result;
}

CUresult CUDAAPI cuGetProcAddress_v2(const char* symbol, void** pfn, int cudaVersion, cuuint64_t flags,
                                     CUdriverProcAddressQueryResult* symbolStatus) {
  return jitcache::client::preload::resolve_v2(k_proc_address_hooks[1], __builtin_return_address(0), symbol, pfn,
                                               cudaVersion, flags, symbolStatus);
}

CUresult jitcache_preload_cuGetProcAddress_v2_ptsz(
    const char* symbol, void** pfn, int version, cuuint64_t flags,
    CUdriverProcAddressQueryResult* status) __asm__("cuGetProcAddress_v2_ptsz");
CUresult jitcache_preload_cuGetProcAddress_v2_ptsz(const char* symbol, void** pfn, int version, cuuint64_t flags,
                                                   CUdriverProcAddressQueryResult* status) {
  return jitcache::client::preload::resolve_v2(k_proc_address_hooks[2], __builtin_return_address(0), symbol, pfn,
                                               version, flags, status);
}

int cudaGetDriverEntryPoint(const char* symbol, void** pfn, unsigned long long flags, int* status) {
  return jitcache::client::preload::entry_point("cudaGetDriverEntryPoint", __builtin_return_address(0), symbol, pfn,
                                                flags, status);
}
int cudaGetDriverEntryPoint_ptsz(const char* symbol, void** pfn, unsigned long long flags, int* status) {
  return jitcache::client::preload::entry_point("cudaGetDriverEntryPoint_ptsz", __builtin_return_address(0), symbol,
                                                pfn, flags, status);
}
int cudaGetDriverEntryPointByVersion(const char* symbol, void** pfn, unsigned int version, unsigned long long flags,
                                     int* status) {
  return jitcache::client::preload::entry_point_by_version("cudaGetDriverEntryPointByVersion",
                                                           __builtin_return_address(0), symbol, pfn, version, flags,
                                                           status);
}
int cudaGetDriverEntryPointByVersion_ptsz(const char* symbol, void** pfn, unsigned int version,
                                          unsigned long long flags, int* status) {
  return jitcache::client::preload::entry_point_by_version("cudaGetDriverEntryPointByVersion_ptsz",
                                                           __builtin_return_address(0), symbol, pfn, version, flags,
                                                           status);
}

#pragma GCC visibility pop
}  // extern "C"

namespace jitcache::client::preload {

namespace {
// The 11.3 form for versions 11030-11999, _v2 from 12000 (cudaTypedefs.h PFN_cuGetProcAddress_v11030
// and _v12000); the _ptsz name is reached only by direct binding.
const Hook k_proc_address_hooks[3] = {
    {"cuGetProcAddress", "cuGetProcAddress", 11030, HookedLibrary::cuda,
     reinterpret_cast<void*>(&jitcache_preload_cuGetProcAddress), &g_v1},
    {"cuGetProcAddress_v2", "cuGetProcAddress", 12000, HookedLibrary::cuda,
     reinterpret_cast<void*>(&cuGetProcAddress_v2), &g_v2},
    {"cuGetProcAddress_v2_ptsz", nullptr, 0, HookedLibrary::cuda,
     reinterpret_cast<void*>(&jitcache_preload_cuGetProcAddress_v2_ptsz), &g_v2_ptsz},
};
}  // namespace

std::span<const Hook> proc_address_hooks() { return k_proc_address_hooks; }

}  // namespace jitcache::client::preload
