// cuLibraryLoadData and cuLibraryLoadFromFile through the cache, and cuLibraryUnload
// (docs/transparent.md "Libraries"). cudart 13 loads a program's embedded fat binary with one
// cuLibraryLoadData of its __fatBinC_Wrapper_t (docs/driver-facts.md §6): an image holding a cubin
// every device runs passes through untouched; one the driver would JIT is served from the cache as
// a cubin and handed to the real cuLibraryLoadData with the caller's JIT and library options, so
// cudart's own launch path (its host function table) keeps working. A cubin kept for
// CU_LIBRARY_BINARY_IS_PRESERVED lives until cuLibraryUnload (loader/preserved_images.hpp).
// Thread safety: as the driver's functions.
#include <cuda.h>

#include <atomic>
#include <memory>

#include <client/src/api/module_file.hpp>
#include <client/src/loader/library_target.hpp>
#include <client/src/loader/preserved_images.hpp>
#include <client/src/preload/cached_call.hpp>
#include <client/src/preload/hook.hpp>
#include <client/src/preload/real_symbols.hpp>
#include <client/src/preload/symbol_routes.hpp>

namespace jitcache::client::preload {

namespace {

using LoadData = CUresult (*)(CUlibrary*, const void*, CUjit_option*, void**, unsigned, CUlibraryOption*, void**,
                              unsigned);
using LoadFromFile = CUresult (*)(CUlibrary*, const char*, CUjit_option*, void**, unsigned, CUlibraryOption*, void**,
                                  unsigned);
using Unload = CUresult (*)(CUlibrary);

std::atomic<void*> g_load_data{nullptr};
std::atomic<void*> g_load_from_file{nullptr};
std::atomic<void*> g_unload{nullptr};

extern const Hook k_library_hooks[3];
enum : std::size_t { k_load_data, k_load_from_file, k_unload };

api::MakeTarget library_target(CUlibrary* library, loader::LibraryOptions options, const char* file) {
  return [library, options, file](const driver::DriverApi& api, const loader::CallerOptions& jit) {
    return std::make_unique<loader::LibraryTarget>(api, library, jit, options, file);
  };
}

}  // namespace

}  // namespace jitcache::client::preload

using jitcache::client::preload::k_library_hooks;
namespace preload = jitcache::client::preload;

extern "C" {
#pragma GCC visibility push(default)

CUresult CUDAAPI cuLibraryLoadData(CUlibrary* library, const void* code, CUjit_option* jitOptions,
                                   void** jitOptionsValues, unsigned int numJitOptions, CUlibraryOption* libraryOptions,
                                   void** libraryOptionValues, unsigned int numLibraryOptions) {
  auto real = preload::real_function<preload::LoadData>(k_library_hooks[preload::k_load_data]);
  if (real == nullptr) return CUDA_ERROR_NOT_INITIALIZED;
  auto real_call = [&] {
    return real(library, code, jitOptions, jitOptionsValues, numJitOptions, libraryOptions, libraryOptionValues,
                numLibraryOptions);
  };
  const jitcache::client::loader::LibraryOptions options{libraryOptions, libraryOptionValues, numLibraryOptions};
  return preload::run_cached({code, numJitOptions, jitOptions, jitOptionsValues, false, "cuLibraryLoadData"},
                             preload::library_target(library, options, nullptr), real_call, true);
}

CUresult CUDAAPI cuLibraryLoadFromFile(CUlibrary* library, const char* fileName, CUjit_option* jitOptions,
                                       void** jitOptionsValues, unsigned int numJitOptions,
                                       CUlibraryOption* libraryOptions, void** libraryOptionValues,
                                       unsigned int numLibraryOptions) {
  auto real = preload::real_function<preload::LoadFromFile>(k_library_hooks[preload::k_load_from_file]);
  if (real == nullptr) return CUDA_ERROR_NOT_INITIALIZED;
  auto real_call = [&] {
    return real(library, fileName, jitOptions, jitOptionsValues, numJitOptions, libraryOptions, libraryOptionValues,
                numLibraryOptions);
  };
  if (preload::preload_disabled()) return real_call();
  // cuLibraryLoadFromFile refuses CU_LIBRARY_BINARY_IS_PRESERVED (docs/driver-facts.md §6): the
  // driver's own answer, not a cached cubin that cuLibraryLoadData would take with it.
  const jitcache::client::loader::LibraryOptions given{libraryOptions, libraryOptionValues, numLibraryOptions};
  if (given.preserves_binary()) return real_call();
  try {
    auto contents = jitcache::client::api::read_module_file(fileName);
    if (!contents) return real_call();
    const jitcache::client::loader::LibraryOptions options{libraryOptions, libraryOptionValues, numLibraryOptions};
    return preload::run_cached({contents->data(), numJitOptions, jitOptions, jitOptionsValues, false,
                                "cuLibraryLoadFromFile"},
                               preload::library_target(library, options, fileName), real_call, true);
  } catch (...) {
    return real_call();
  }
}

CUresult CUDAAPI cuLibraryUnload(CUlibrary library) {
  auto real = preload::real_function<preload::Unload>(k_library_hooks[preload::k_unload]);
  if (real == nullptr) return CUDA_ERROR_NOT_INITIALIZED;
  const CUresult result = real(library);
  // The driver no longer reads a preserved cubin once the library is gone.
  if (result == CUDA_SUCCESS) jitcache::client::loader::release_preserved_image(library);
  return result;
}

#pragma GCC visibility pop
}  // extern "C"

namespace jitcache::client::preload {

namespace {
// cudaTypedefs.h: PFN_cuLibraryLoadData_v12000, PFN_cuLibraryLoadFromFile_v12000,
// PFN_cuLibraryUnload_v12000.
const Hook k_library_hooks[3] = {
    {"cuLibraryLoadData", "cuLibraryLoadData", 12000, HookedLibrary::cuda, reinterpret_cast<void*>(&cuLibraryLoadData),
     &g_load_data},
    {"cuLibraryLoadFromFile", "cuLibraryLoadFromFile", 12000, HookedLibrary::cuda,
     reinterpret_cast<void*>(&cuLibraryLoadFromFile), &g_load_from_file},
    {"cuLibraryUnload", "cuLibraryUnload", 12000, HookedLibrary::cuda, reinterpret_cast<void*>(&cuLibraryUnload),
     &g_unload},
};
}  // namespace

std::span<const Hook> library_hooks() { return k_library_hooks; }

}  // namespace jitcache::client::preload
