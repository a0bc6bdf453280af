// cuModuleLoad, cuModuleLoadData, cuModuleLoadDataEx and cuModuleLoadFatBinary: the argument checks,
// the load_calls counters, then image_loader; a module on success, the load's CUresult otherwise.
//
// cuModuleLoad reads the file itself: one that cannot be opened or read is CUDA_ERROR_FILE_NOT_FOUND;
// its bytes are then loaded as cuModuleLoadData would load them (a cubin, PTX or a fat binary;
// docs/driver-facts.md §6). cuModuleLoadFatBinary takes what cuModuleLoadData takes [I: cuda.h says
// "fat binary object", but the image names its own kind].
// Thread safety: any thread.
#pragma once

#include <cuda.h>

namespace jitcache::fakes::fake_cuda {

enum class ModuleLoadEntry { load_data, load_data_ex, load_fatbinary };

CUresult load_module_from_memory(ModuleLoadEntry entry, CUmodule* module, const void* image, unsigned option_count,
                                 CUjit_option* options, void** option_values);
CUresult load_module_from_file(CUmodule* module, const char* path);
// cuModuleGetLoadingMode: CUDA_MODULE_LOADING as the fake read it (docs/driver-facts.md §6).
CUresult module_loading_mode(CUmoduleLoadingMode* mode);

}  // namespace jitcache::fakes::fake_cuda
