// Loaded modules and their functions: the objects behind CUmodule and CUfunction handles.
//
// A module remembers its cubin's kernel names so cuModuleGetFunction answers as the driver would
// (a non-null CUfunction for a kernel present, CUDA_ERROR_NOT_FOUND otherwise). Handles are checked
// against the live set, so an unknown or already unloaded CUmodule is CUDA_ERROR_INVALID_HANDLE
// rather than a use-after-free. A library's module (cuLibraryGetModule) lives here too, so
// cuModuleGetFunction works on it, but only cuLibraryUnload removes it: cuModuleUnload answers
// CUDA_ERROR_NOT_PERMITTED, as cuda.h documents for cuModuleUnload (docs/driver-facts.md §6).
// Thread safety: every member function may be called from any thread (one mutex). A CUfunction stays
// valid until its module is unloaded, as with the driver.
#pragma once

#include <cuda.h>

#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace jitcache::fakes::fake_cuda {

struct FakeFunction {
  std::string name;
};

enum class ModuleOwner { caller, library };

struct FakeModule {
  std::vector<std::unique_ptr<FakeFunction>> functions;
  std::vector<std::byte> cubin;  // the image the module was made from, as the driver keeps a copy
  ModuleOwner owner = ModuleOwner::caller;
};

// A module for `kernels`; with `unresolved` set none of them can be found (see CubinInfo).
std::unique_ptr<FakeModule> make_module(std::vector<std::byte> cubin, const std::vector<std::string>& kernels,
                                        bool unresolved);

class ModuleRegistry {
 public:
  CUmodule add(std::unique_ptr<FakeModule> module);
  // cuModuleUnload: CUDA_ERROR_INVALID_HANDLE for a handle that is not a live module,
  // CUDA_ERROR_NOT_PERMITTED for a library's module.
  CUresult remove(CUmodule handle);
  // cuLibraryUnload's part: removes a library's module.
  void remove_library_module(CUmodule handle);
  CUresult get_function(CUmodule handle, const char* name, CUfunction* out) const;
  // The kernel name behind a CUfunction of a live module, or "" when it is not one.
  std::string function_name(CUfunction function) const;
  // Modules of ModuleOwner::caller (the modules_alive counter).
  std::size_t alive() const;

 private:
  mutable std::mutex m_mutex;
  std::map<CUmodule, std::unique_ptr<FakeModule>> m_modules;
};

}  // namespace jitcache::fakes::fake_cuda
