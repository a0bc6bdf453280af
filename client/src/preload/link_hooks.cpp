// cuLinkCreate, cuLinkAddData, cuLinkAddFile (plain and _v2), cuLinkComplete and cuLinkDestroy
// through the cache (docs/transparent.md "Link sessions"): each wrapper hands the real functions of
// the ABI the program called and its arguments to the link session calls (client/src/link/
// cu_link_calls.hpp), which keep a session per state and serve a whole link from the cache.
// Thread safety: as the driver's functions.
#include <cuda.h>

#include <atomic>

#include <client/src/link/cu_link_calls.hpp>
#include <client/src/preload/hook.hpp>
#include <client/src/preload/real_symbols.hpp>
#include <client/src/preload/symbol_routes.hpp>

// cuda.h maps these names to their _v2 ABI; the plain ABI is exported under its own name too.
#undef cuLinkCreate
#undef cuLinkAddData
#undef cuLinkAddFile

namespace jitcache::client::preload {

namespace {

std::atomic<void*> g_create{nullptr};
std::atomic<void*> g_create_v2{nullptr};
std::atomic<void*> g_add_data{nullptr};
std::atomic<void*> g_add_data_v2{nullptr};
std::atomic<void*> g_add_file{nullptr};
std::atomic<void*> g_add_file_v2{nullptr};
std::atomic<void*> g_complete{nullptr};
std::atomic<void*> g_destroy{nullptr};

extern const Hook k_link_hooks[8];
enum : std::size_t {
  k_create,
  k_create_v2,
  k_add_data,
  k_add_data_v2,
  k_add_file,
  k_add_file_v2,
  k_complete,
  k_destroy
};

// The real functions of one ABI: the plain names (CUDA 5.5) or the _v2 ones (6.5).
link::CuLinkEntryPoints family(bool v2) {
  link::CuLinkEntryPoints real;
  real.create = real_function<decltype(real.create)>(k_link_hooks[v2 ? k_create_v2 : k_create]);
  real.add_data = real_function<decltype(real.add_data)>(k_link_hooks[v2 ? k_add_data_v2 : k_add_data]);
  real.add_file = real_function<decltype(real.add_file)>(k_link_hooks[v2 ? k_add_file_v2 : k_add_file]);
  real.complete = real_function<decltype(real.complete)>(k_link_hooks[k_complete]);
  real.destroy = real_function<decltype(real.destroy)>(k_link_hooks[k_destroy]);
  return real;
}

CUresult create(bool v2, unsigned count, CUjit_option* options, void** values, CUlinkState* state) {
  const link::CuLinkEntryPoints real = family(v2);
  if (real.create == nullptr) return CUDA_ERROR_NOT_INITIALIZED;
  if (preload_disabled()) return real.create(count, options, values, state);
  return link::cu_link_create(real, count, options, values, state);
}

CUresult add_data(bool v2, CUlinkState state, CUjitInputType type, void* data, std::size_t size, const char* name,
                  unsigned count, CUjit_option* options, void** values) {
  const link::CuLinkEntryPoints real = family(v2);
  if (real.add_data == nullptr) return CUDA_ERROR_NOT_INITIALIZED;
  return link::cu_link_add_data(real, state, type, data, size, name, count, options, values);
}

CUresult add_file(bool v2, CUlinkState state, CUjitInputType type, const char* path, unsigned count,
                  CUjit_option* options, void** values) {
  const link::CuLinkEntryPoints real = family(v2);
  if (real.add_file == nullptr) return CUDA_ERROR_NOT_INITIALIZED;
  return link::cu_link_add_file(real, state, type, path, count, options, values);
}

}  // namespace

}  // namespace jitcache::client::preload

using jitcache::client::preload::k_link_hooks;
namespace preload = jitcache::client::preload;

extern "C" {
#pragma GCC visibility push(default)

CUresult CUDAAPI cuLinkCreate(unsigned int numOptions, CUjit_option* options, void** optionValues,
                              CUlinkState* stateOut) {
  return preload::create(false, numOptions, options, optionValues, stateOut);
}

CUresult CUDAAPI cuLinkCreate_v2(unsigned int numOptions, CUjit_option* options, void** optionValues,
                                 CUlinkState* stateOut) {
  return preload::create(true, numOptions, options, optionValues, stateOut);
}

CUresult CUDAAPI cuLinkAddData(CUlinkState state, CUjitInputType type, void* data, size_t size, const char* name,
                               unsigned int numOptions, CUjit_option* options, void** optionValues) {
  return preload::add_data(false, state, type, data, size, name, numOptions, options, optionValues);
}

CUresult CUDAAPI cuLinkAddData_v2(CUlinkState state, CUjitInputType type, void* data, size_t size, const char* name,
                                  unsigned int numOptions, CUjit_option* options, void** optionValues) {
  return preload::add_data(true, state, type, data, size, name, numOptions, options, optionValues);
}

CUresult CUDAAPI cuLinkAddFile(CUlinkState state, CUjitInputType type, const char* path, unsigned int numOptions,
                               CUjit_option* options, void** optionValues) {
  return preload::add_file(false, state, type, path, numOptions, options, optionValues);
}

CUresult CUDAAPI cuLinkAddFile_v2(CUlinkState state, CUjitInputType type, const char* path, unsigned int numOptions,
                                  CUjit_option* options, void** optionValues) {
  return preload::add_file(true, state, type, path, numOptions, options, optionValues);
}

CUresult CUDAAPI cuLinkComplete(CUlinkState state, void** cubinOut, size_t* sizeOut) {
  const auto real = preload::family(true);
  if (real.complete == nullptr) return CUDA_ERROR_NOT_INITIALIZED;
  return jitcache::client::link::cu_link_complete(real, state, cubinOut, sizeOut);
}

CUresult CUDAAPI cuLinkDestroy(CUlinkState state) {
  const auto real = preload::family(true);
  if (real.destroy == nullptr) return CUDA_ERROR_NOT_INITIALIZED;
  return jitcache::client::link::cu_link_destroy(real, state);
}

#pragma GCC visibility pop
}  // extern "C"

namespace jitcache::client::preload {

namespace {
// Versions from cudaTypedefs.h: PFN_cuLinkCreate_v5050 / _v6050, PFN_cuLinkAddData_v5050 / _v6050,
// PFN_cuLinkAddFile_v5050 / _v6050, PFN_cuLinkComplete_v5050, PFN_cuLinkDestroy_v5050
// (docs/driver-facts.md §1).
const Hook k_link_hooks[8] = {
    {"cuLinkCreate", "cuLinkCreate", 5050, HookedLibrary::cuda, reinterpret_cast<void*>(&cuLinkCreate), &g_create},
    {"cuLinkCreate_v2", "cuLinkCreate", 6050, HookedLibrary::cuda, reinterpret_cast<void*>(&cuLinkCreate_v2),
     &g_create_v2},
    {"cuLinkAddData", "cuLinkAddData", 5050, HookedLibrary::cuda, reinterpret_cast<void*>(&cuLinkAddData), &g_add_data},
    {"cuLinkAddData_v2", "cuLinkAddData", 6050, HookedLibrary::cuda, reinterpret_cast<void*>(&cuLinkAddData_v2),
     &g_add_data_v2},
    {"cuLinkAddFile", "cuLinkAddFile", 5050, HookedLibrary::cuda, reinterpret_cast<void*>(&cuLinkAddFile), &g_add_file},
    {"cuLinkAddFile_v2", "cuLinkAddFile", 6050, HookedLibrary::cuda, reinterpret_cast<void*>(&cuLinkAddFile_v2),
     &g_add_file_v2},
    {"cuLinkComplete", "cuLinkComplete", 5050, HookedLibrary::cuda, reinterpret_cast<void*>(&cuLinkComplete),
     &g_complete},
    {"cuLinkDestroy", "cuLinkDestroy", 5050, HookedLibrary::cuda, reinterpret_cast<void*>(&cuLinkDestroy), &g_destroy},
};
}  // namespace

std::span<const Hook> link_hooks() { return k_link_hooks; }

}  // namespace jitcache::client::preload
