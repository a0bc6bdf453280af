#include <client/src/preload/symbol_routes.hpp>

#include <cuda.h>
#include <dlfcn.h>

#include <atomic>
#include <cstring>
#include <span>

#include <client/src/preload/hook.hpp>
#include <client/src/preload/real_symbols.hpp>
#include <client/src/preload/shim_link.hpp>

namespace jitcache::client::preload {

namespace {

// Whether `address` lies in a mapped file named like `library` ("libnvJitLink.so").
bool in_library(void* address, const char* library) {
  Dl_info info{};
  if (::dladdr(address, &info) == 0 || info.dli_fname == nullptr) return false;
  const char* slash = std::strrchr(info.dli_fname, '/');
  const char* file = slash != nullptr ? slash + 1 : info.dli_fname;
  return std::strncmp(file, library, std::strlen(library)) == 0;
}

using ProcAddressV1 = CUresult (*)(const char*, void**, int, cuuint64_t);
using ProcAddressV2 = CUresult (*)(const char*, void**, int, cuuint64_t, CUdriverProcAddressQueryResult*);

std::atomic<void*> g_real_v1{nullptr};
std::atomic<void*> g_real_v2{nullptr};

CUresult own_get_proc_address_v2(const char* symbol, void** pfn, int version, cuuint64_t flags,
                                 CUdriverProcAddressQueryResult* status) {
  auto real = reinterpret_cast<ProcAddressV2>(g_real_v2.load(std::memory_order_acquire));
  const CUresult result = real(symbol, pfn, version, flags, status);
  if (result == CUDA_SUCCESS && pfn != nullptr) *pfn = unwrap(*pfn);
  return result;
}

CUresult own_get_proc_address_v1(const char* symbol, void** pfn, int version, cuuint64_t flags) {
  auto real = reinterpret_cast<ProcAddressV1>(g_real_v1.load(std::memory_order_acquire));
  const CUresult result = real(symbol, pfn, version, flags);
  if (result == CUDA_SUCCESS && pfn != nullptr) *pfn = unwrap(*pfn);
  return result;
}

}  // namespace

void* unwrap(void* pfn) {
  if (const Hook* hook = hook_at(pfn)) return resolve_real(*hook);
  return pfn;
}

void* own_resolver(const char* symbol, void* found) {
  if (found == nullptr || symbol == nullptr) return found;
  found = unwrap(found);
  if (found == nullptr) return nullptr;
  if (std::strcmp(symbol, "cuGetProcAddress_v2") == 0) {
    g_real_v2.store(found, std::memory_order_release);
    return reinterpret_cast<void*>(&own_get_proc_address_v2);
  }
  if (std::strcmp(symbol, "cuGetProcAddress") == 0) {
    g_real_v1.store(found, std::memory_order_release);
    return reinterpret_cast<void*>(&own_get_proc_address_v1);
  }
  return found;
}

bool preload_disabled() { return shim().disabled() != 0; }

namespace {

// Whether `found` is a real definition of `hook`'s symbol: the one its calls go to, or the driver's
// own (a lookup in the driver's handle finds the driver's, not the interposer after ours).
bool is_real_definition(const Hook& hook, void* found) {
  if (resolve_real(hook) == found) return true;
  if (hook.library != HookedLibrary::cuda) return false;
  void* cuda = cuda_library();
  return cuda != nullptr && real_dlsym(cuda, hook.symbol) == found;
}

// The function a program is handed for `hook`: the shim's stub.
void* handed_out(const Hook& hook, void* otherwise) {
  void* stub = stub_of(hook);
  return stub != nullptr ? stub : otherwise;
}

}  // namespace

void* route_symbol(const char* symbol, void* found) {
  if (found == nullptr || preload_disabled()) return found;
  const Hook* hook = hook_named(symbol);
  if (hook == nullptr) return found;
  if (hook_at(found) == hook) return handed_out(*hook, found);
  if (is_real_definition(*hook, found)) return handed_out(*hook, found);
  if (hook->library == HookedLibrary::nvjitlink && in_library(found, "libnvJitLink.so") && adopt_real(*hook, found)) {
    return handed_out(*hook, found);
  }
  if (hook->library == HookedLibrary::nvrtc && in_library(found, "libnvrtc") && adopt_real(*hook, found)) {
    return handed_out(*hook, found);
  }
  return found;
}

void* route_proc_address(const char* base, void* found, int version) {
  if (found == nullptr || base == nullptr) return found;
  const std::span<const Hook* const> hooks = hooks_of_base(base);
  if (hooks.empty() || preload_disabled()) return found;
  const Hook* newest_fitting = nullptr;
  for (const Hook* hook : hooks) {
    if (hook_at(found) == hook || is_real_definition(*hook, found)) return handed_out(*hook, found);
    if (hook->min_version <= version &&
        (newest_fitting == nullptr || hook->min_version > newest_fitting->min_version)) {
      newest_fitting = hook;
    }
  }
  if (newest_fitting == nullptr) return found;
  if (newest_fitting->real->load(std::memory_order_acquire) == nullptr && adopt_real(*newest_fitting, found)) {
    return handed_out(*newest_fitting, found);
  }
  return found;
}

}  // namespace jitcache::client::preload
