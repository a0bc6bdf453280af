// cuModuleLoad, cuModuleLoadData, cuModuleLoadDataEx and cuModuleLoadFatBinary through the cache:
// the load flow of jitcache_module_load_data_ex, unchanged (docs/client-guide.md §4), into a module
// of the current context. A cubin, or a fat binary holding one for the device, costs a
// classification and goes to the driver as given.
// Thread safety: as the driver's functions.
#include <cuda.h>

#include <atomic>
#include <functional>
#include <memory>

#include <client/src/api/module_file.hpp>
#include <client/src/loader/image_target.hpp>
#include <client/src/preload/cached_call.hpp>
#include <client/src/preload/hook.hpp>
#include <client/src/preload/real_symbols.hpp>
#include <client/src/preload/symbol_routes.hpp>

namespace jitcache::client::preload {

namespace {

using LoadData = CUresult (*)(CUmodule*, const void*);
using LoadDataEx = CUresult (*)(CUmodule*, const void*, unsigned, CUjit_option*, void**);
using LoadFile = CUresult (*)(CUmodule*, const char*);
using LoadFatBinary = CUresult (*)(CUmodule*, const void*);

std::atomic<void*> g_load{nullptr};
std::atomic<void*> g_load_data{nullptr};
std::atomic<void*> g_load_data_ex{nullptr};
std::atomic<void*> g_load_fat_binary{nullptr};

extern const Hook k_module_hooks[4];
enum : std::size_t { k_load, k_load_data, k_load_data_ex, k_load_fat_binary };

api::MakeTarget module_target(CUmodule* module) {
  return [module](const driver::DriverApi& api, const loader::CallerOptions&) {
    return std::make_unique<loader::ModuleTarget>(api, module);
  };
}

// For the entry points without JIT options (cuModuleLoad, cuModuleLoadData, cuModuleLoadFatBinary):
// what goes to the driver as given goes through the very function the program called, with its
// arguments, rather than through cuModuleLoadDataEx.
class AsCalledModuleTarget final : public loader::ImageTarget {
 public:
  AsCalledModuleTarget(const driver::DriverApi& api, CUmodule* module, std::function<CUresult()> as_called)
      : m_module(api, module), m_as_called(std::move(as_called)) {}
  bool has_output() const override { return m_module.has_output(); }
  common::Result<driver::ComputeCapability> device() override { return m_module.device(); }
  CUresult load_as_given(const void*, unsigned, CUjit_option*, void**) override { return m_as_called(); }
  CUresult load_cubin(const void* cubin, std::size_t size) override { return m_module.load_cubin(cubin, size); }
  std::string_view call_name() const override { return m_module.call_name(); }

 private:
  loader::ModuleTarget m_module;
  std::function<CUresult()> m_as_called;
};

api::MakeTarget as_called_target(CUmodule* module, std::function<CUresult()> as_called) {
  return [module, as_called](const driver::DriverApi& api, const loader::CallerOptions&) {
    return std::make_unique<AsCalledModuleTarget>(api, module, as_called);
  };
}

CUresult load_data_ex(CUmodule* module, const void* image, unsigned count, CUjit_option* options, void** values) {
  auto real = real_function<LoadDataEx>(k_module_hooks[k_load_data_ex]);
  if (real == nullptr) return CUDA_ERROR_NOT_INITIALIZED;
  return run_cached({image, count, options, values, false, "cuModuleLoadDataEx"}, module_target(module),
                    [&] { return real(module, image, count, options, values); });
}

}  // namespace

}  // namespace jitcache::client::preload

using jitcache::client::preload::k_module_hooks;
namespace preload = jitcache::client::preload;

extern "C" {
#pragma GCC visibility push(default)

CUresult CUDAAPI cuModuleLoadDataEx(CUmodule* module, const void* image, unsigned int numOptions, CUjit_option* options,
                                    void** optionValues) {
  return preload::load_data_ex(module, image, numOptions, options, optionValues);
}

CUresult CUDAAPI cuModuleLoadData(CUmodule* module, const void* image) {
  auto real = preload::real_function<preload::LoadData>(k_module_hooks[preload::k_load_data]);
  if (real == nullptr) return CUDA_ERROR_NOT_INITIALIZED;
  auto real_call = [=] { return real(module, image); };
  return preload::run_cached({image, 0, nullptr, nullptr, false, "cuModuleLoadData"},
                             preload::as_called_target(module, real_call), real_call);
}

CUresult CUDAAPI cuModuleLoadFatBinary(CUmodule* module, const void* fatCubin) {
  auto real = preload::real_function<preload::LoadFatBinary>(k_module_hooks[preload::k_load_fat_binary]);
  if (real == nullptr) return CUDA_ERROR_NOT_INITIALIZED;
  auto real_call = [=] { return real(module, fatCubin); };
  return preload::run_cached({fatCubin, 0, nullptr, nullptr, false, "cuModuleLoadFatBinary"},
                             preload::as_called_target(module, real_call), real_call);
}

CUresult CUDAAPI cuModuleLoad(CUmodule* module, const char* fname) {
  auto real = preload::real_function<preload::LoadFile>(k_module_hooks[preload::k_load]);
  if (real == nullptr) return CUDA_ERROR_NOT_INITIALIZED;
  if (preload::preload_disabled()) return real(module, fname);
  // A file the cache cannot read is the driver's to report (CUDA_ERROR_FILE_NOT_FOUND and its kin).
  try {
    auto contents = jitcache::client::api::read_module_file(fname);
    if (!contents) return real(module, fname);
    auto real_call = [=] { return real(module, fname); };
    return preload::run_cached({contents->data(), 0, nullptr, nullptr, false, "cuModuleLoad"},
                               preload::as_called_target(module, real_call), real_call);
  } catch (...) {
    return real(module, fname);
  }
}

#pragma GCC visibility pop
}  // extern "C"

namespace jitcache::client::preload {

namespace {
// Versions from cudaTypedefs.h: PFN_cuModuleLoad_v2000, PFN_cuModuleLoadData_v2000,
// PFN_cuModuleLoadDataEx_v2010, PFN_cuModuleLoadFatBinary_v2000.
const Hook k_module_hooks[4] = {
    {"cuModuleLoad", "cuModuleLoad", 2000, HookedLibrary::cuda, reinterpret_cast<void*>(&cuModuleLoad), &g_load},
    {"cuModuleLoadData", "cuModuleLoadData", 2000, HookedLibrary::cuda, reinterpret_cast<void*>(&cuModuleLoadData),
     &g_load_data},
    {"cuModuleLoadDataEx", "cuModuleLoadDataEx", 2010, HookedLibrary::cuda,
     reinterpret_cast<void*>(&cuModuleLoadDataEx), &g_load_data_ex},
    {"cuModuleLoadFatBinary", "cuModuleLoadFatBinary", 2000, HookedLibrary::cuda,
     reinterpret_cast<void*>(&cuModuleLoadFatBinary), &g_load_fat_binary},
};
}  // namespace

std::span<const Hook> module_hooks() { return k_module_hooks; }

}  // namespace jitcache::client::preload
