// The cuModule* entry points under their ABI names (module_api.hpp says what each does).
// Thread safety: every entry point may be called from any thread.
#include <tests/fakes/fake_cuda/abi_declarations.hpp>
#include <tests/fakes/fake_cuda/fake_driver.hpp>
#include <tests/fakes/fake_cuda/module_api.hpp>

#include <cuda.h>

namespace fake = jitcache::fakes::fake_cuda;

extern "C" {

CUresult CUDAAPI cuModuleLoad(CUmodule* module, const char* path) { return fake::load_module_from_file(module, path); }

CUresult CUDAAPI cuModuleLoadData(CUmodule* module, const void* image) {
  return fake::load_module_from_memory(fake::ModuleLoadEntry::load_data, module, image, 0, nullptr, nullptr);
}

CUresult CUDAAPI cuModuleLoadDataEx(CUmodule* module, const void* image, unsigned int count, CUjit_option* options,
                                    void** values) {
  return fake::load_module_from_memory(fake::ModuleLoadEntry::load_data_ex, module, image, count, options, values);
}

CUresult CUDAAPI cuModuleLoadFatBinary(CUmodule* module, const void* fat_cubin) {
  return fake::load_module_from_memory(fake::ModuleLoadEntry::load_fatbinary, module, fat_cubin, 0, nullptr, nullptr);
}

CUresult CUDAAPI cuModuleUnload(CUmodule module) { return fake::FakeDriver::instance().modules.remove(module); }

CUresult CUDAAPI cuModuleGetFunction(CUfunction* function, CUmodule module, const char* name) {
  return fake::FakeDriver::instance().modules.get_function(module, name, function);
}

CUresult CUDAAPI cuModuleGetLoadingMode(CUmoduleLoadingMode* mode) { return fake::module_loading_mode(mode); }

}  // extern "C"
