// Loaded libraries and their kernels: the objects behind CUlibrary and CUkernel handles.
//
// cuLibraryLoadData accepts any image and reports a bad one only later (docs/driver-facts.md §0.2,
// measured on the H200: a wrong-arch cubin, a text file and PTX with a bad .version all loaded with
// CUDA_SUCCESS and failed at cuLibraryGetKernel with 209, 200, 222 or 218). So a FakeLibrary holds
// either its module or the CUresult its load came to, and every call that reads the library answers
// that CUresult. A library loaded with CU_LIBRARY_BINARY_IS_PRESERVED also holds the caller memory it
// came from; each call on it checks that memory first and answers CUDA_ERROR_ILLEGAL_STATE, with one
// `fake_cuda:` warning per library, once it changed or went away (preserved_image.hpp).
// Handles are checked against the live set: an unknown CUlibrary or CUkernel is
// CUDA_ERROR_INVALID_HANDLE, cuLibraryUnload of one CUDA_ERROR_INVALID_VALUE (the only error cuda.h
// lists for it, docs/driver-facts.md §6).
// Thread safety: every member function may be called from any thread (one mutex). A CUkernel stays
// valid until its library is unloaded, as with the driver.
#pragma once

#include <tests/fakes/fake_cuda/counters.hpp>
#include <tests/fakes/fake_cuda/preserved_image.hpp>

#include <cuda.h>

#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace jitcache::fakes::fake_cuda {

struct FakeLibrary;

struct FakeKernel {
  std::string name;
  CUfunction function = nullptr;  // the entry function in the library's module
  FakeLibrary* library = nullptr;
};

struct FakeLibrary {
  CUresult load_result = CUDA_SUCCESS;  // what cuModuleLoadData would have said of the image
  CUmodule module = nullptr;            // in the module registry (ModuleOwner::library), on success
  std::vector<std::unique_ptr<FakeKernel>> kernels;
  std::optional<PreservedImage> preserved;  // CU_LIBRARY_BINARY_IS_PRESERVED
  bool preserved_violation_reported = false;
};

class LibraryRegistry {
 public:
  explicit LibraryRegistry(Counters& counters) : m_counters(counters) {}

  CUlibrary add(std::unique_ptr<FakeLibrary> library);
  // cuLibraryUnload. The library goes whatever the preserved image says; `module_out` is its module,
  // for the caller to remove from the module registry.
  CUresult remove(CUlibrary handle, CUmodule& module_out);
  CUresult get_kernel(CUlibrary handle, const char* name, CUkernel* out);
  CUresult kernel_count(CUlibrary handle, unsigned* out);
  CUresult enumerate_kernels(CUlibrary handle, CUkernel* out, unsigned capacity);
  CUresult get_module(CUlibrary handle, CUmodule* out);
  CUresult kernel_function(CUkernel handle, CUfunction* out);
  // The name of a live kernel, or "" when `handle` is none (a launch given a CUkernel).
  std::string kernel_name(CUkernel handle) const;
  std::size_t alive() const;

 private:
  // The library behind `handle` and the first answer a call on it must give: INVALID_HANDLE,
  // ILLEGAL_STATE for a preserved image that changed, or the deferred load error. Locked by caller.
  CUresult check(CUlibrary handle, std::string_view api, FakeLibrary*& library_out);
  CUresult check_preserved(FakeLibrary& library, std::string_view api);

  Counters& m_counters;
  mutable std::mutex m_mutex;
  std::map<CUlibrary, std::unique_ptr<FakeLibrary>> m_libraries;
  std::map<CUkernel, FakeKernel*> m_kernels;
};

}  // namespace jitcache::fakes::fake_cuda
