#include <client/src/preload/symbol_routes.hpp>

#include <cuda.h>
#include <dlfcn.h>

#include <atomic>
#include <cstdlib>
#include <cstring>

#include <client/src/preload/hook.hpp>
#include <client/src/preload/real_symbols.hpp>

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
  if (pfn == nullptr) return pfn;
  for (std::span<const Hook> table : hook_tables()) {
    for (const Hook& hook : table) {
      if (hook.wrapper == pfn) return resolve_real(hook);
    }
  }
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

bool could_be_hooked(const char* symbol) {
  return symbol != nullptr && ((symbol[0] == 'c' && symbol[1] == 'u') || std::strncmp(symbol, "nvJitLink", 9) == 0 ||
                               std::strncmp(symbol, "__nvJitLink", 11) == 0);
}

bool preload_disabled() {
  // 0 unknown, 1 enabled, 2 disabled; racing first readers compute the same answer.
  static std::atomic<int> state{0};
  int known = state.load(std::memory_order_relaxed);
  if (known == 0) {
    const char* value = std::getenv("JITCACHE_DISABLE");
    known = (value != nullptr && *value != '\0' && std::strcmp(value, "0") != 0) ? 2 : 1;
    state.store(known, std::memory_order_relaxed);
  }
  return known == 2;
}

void* route_symbol(const char* symbol, void* found) {
  if (found == nullptr || !could_be_hooked(symbol) || preload_disabled()) return found;
  for (std::span<const Hook> table : hook_tables()) {
    for (const Hook& hook : table) {
      if (std::strcmp(hook.symbol, symbol) != 0) continue;
      if (found == hook.wrapper) return found;
      if (resolve_real(hook) == found) return hook.wrapper;
      if (hook.library == HookedLibrary::nvjitlink && in_library(found, "libnvJitLink.so") && adopt_real(hook, found)) {
        return hook.wrapper;
      }
      return found;
    }
  }
  return found;
}

void* route_proc_address(const char* base, void* found, int version) {
  if (found == nullptr || base == nullptr || preload_disabled()) return found;
  const Hook* newest_fitting = nullptr;
  bool any = false;
  for (std::span<const Hook> table : hook_tables()) {
    for (const Hook& hook : table) {
      if (hook.base == nullptr || hook.library != HookedLibrary::cuda || std::strcmp(hook.base, base) != 0) continue;
      any = true;
      if (found == hook.wrapper) return found;
      if (resolve_real(hook) == found) return hook.wrapper;
      if (hook.min_version <= version &&
          (newest_fitting == nullptr || hook.min_version > newest_fitting->min_version)) {
        newest_fitting = &hook;
      }
    }
  }
  if (!any || newest_fitting == nullptr) return found;
  if (newest_fitting->real->load(std::memory_order_acquire) == nullptr && adopt_real(*newest_fitting, found)) {
    return newest_fitting->wrapper;
  }
  return found;
}

}  // namespace jitcache::client::preload
