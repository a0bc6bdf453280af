#include <tests/fakes/fake_cuda/library_registry.hpp>

#include <tests/fakes/fake_cuda/driver_settings.hpp>

#include <algorithm>
#include <string>

namespace jitcache::fakes::fake_cuda {

CUlibrary LibraryRegistry::add(std::unique_ptr<FakeLibrary> library) {
  // The handle is the object's address: unique while it lives, and opaque to the caller.
  auto* handle = reinterpret_cast<CUlibrary>(library.get());
  const std::lock_guard lock(m_mutex);
  for (const auto& kernel : library->kernels) m_kernels.emplace(reinterpret_cast<CUkernel>(kernel.get()), kernel.get());
  m_libraries.emplace(handle, std::move(library));
  return handle;
}

CUresult LibraryRegistry::check_preserved(FakeLibrary& library, std::string_view api) {
  if (!library.preserved) return CUDA_SUCCESS;
  const auto changed = library.preserved->changed();
  if (!changed) return CUDA_SUCCESS;
  m_counters.preserved_image_violations.fetch_add(1);
  const std::string message = std::string(api) +
                              ": the image of a library loaded with CU_LIBRARY_BINARY_IS_PRESERVED " +
                              "must stay as it was until cuLibraryUnload, but " + *changed;
  m_counters.set_last_error_log(message);
  if (!library.preserved_violation_reported) {
    library.preserved_violation_reported = true;
    warn(message);
  }
  return CUDA_ERROR_ILLEGAL_STATE;
}

CUresult LibraryRegistry::check(CUlibrary handle, std::string_view api, FakeLibrary*& library_out) {
  const auto found = m_libraries.find(handle);
  if (found == m_libraries.end()) return CUDA_ERROR_INVALID_HANDLE;
  FakeLibrary& library = *found->second;
  if (const CUresult preserved = check_preserved(library, api); preserved != CUDA_SUCCESS) return preserved;
  if (library.load_result != CUDA_SUCCESS) return library.load_result;
  library_out = &library;
  return CUDA_SUCCESS;
}

CUresult LibraryRegistry::remove(CUlibrary handle, CUmodule& module_out) {
  module_out = nullptr;
  const std::lock_guard lock(m_mutex);
  const auto found = m_libraries.find(handle);
  if (found == m_libraries.end()) return CUDA_ERROR_INVALID_VALUE;
  const CUresult preserved = check_preserved(*found->second, "cuLibraryUnload");
  module_out = found->second->module;
  for (const auto& kernel : found->second->kernels) m_kernels.erase(reinterpret_cast<CUkernel>(kernel.get()));
  m_libraries.erase(found);
  return preserved;
}

CUresult LibraryRegistry::get_kernel(CUlibrary handle, const char* name, CUkernel* out) {
  if (out == nullptr || name == nullptr) return CUDA_ERROR_INVALID_VALUE;
  const std::lock_guard lock(m_mutex);
  FakeLibrary* library = nullptr;
  if (const CUresult result = check(handle, "cuLibraryGetKernel", library); result != CUDA_SUCCESS) return result;
  for (const auto& kernel : library->kernels) {
    if (kernel->name == name) {
      *out = reinterpret_cast<CUkernel>(kernel.get());
      return CUDA_SUCCESS;
    }
  }
  return CUDA_ERROR_NOT_FOUND;
}

CUresult LibraryRegistry::kernel_count(CUlibrary handle, unsigned* out) {
  if (out == nullptr) return CUDA_ERROR_INVALID_VALUE;
  const std::lock_guard lock(m_mutex);
  FakeLibrary* library = nullptr;
  if (const CUresult result = check(handle, "cuLibraryGetKernelCount", library); result != CUDA_SUCCESS) return result;
  *out = static_cast<unsigned>(library->kernels.size());
  return CUDA_SUCCESS;
}

CUresult LibraryRegistry::enumerate_kernels(CUlibrary handle, CUkernel* out, unsigned capacity) {
  if (out == nullptr) return CUDA_ERROR_INVALID_VALUE;
  const std::lock_guard lock(m_mutex);
  FakeLibrary* library = nullptr;
  if (const CUresult result = check(handle, "cuLibraryEnumerateKernels", library); result != CUDA_SUCCESS) {
    return result;
  }
  const std::size_t n = std::min<std::size_t>(capacity, library->kernels.size());
  for (std::size_t i = 0; i < n; ++i) out[i] = reinterpret_cast<CUkernel>(library->kernels[i].get());
  return CUDA_SUCCESS;
}

CUresult LibraryRegistry::get_module(CUlibrary handle, CUmodule* out) {
  if (out == nullptr) return CUDA_ERROR_INVALID_VALUE;
  const std::lock_guard lock(m_mutex);
  FakeLibrary* library = nullptr;
  if (const CUresult result = check(handle, "cuLibraryGetModule", library); result != CUDA_SUCCESS) return result;
  *out = library->module;
  return CUDA_SUCCESS;
}

CUresult LibraryRegistry::kernel_function(CUkernel handle, CUfunction* out) {
  if (out == nullptr) return CUDA_ERROR_INVALID_VALUE;
  const std::lock_guard lock(m_mutex);
  const auto found = m_kernels.find(handle);
  if (found == m_kernels.end()) return CUDA_ERROR_INVALID_HANDLE;
  FakeKernel& kernel = *found->second;
  if (const CUresult preserved = check_preserved(*kernel.library, "cuKernelGetFunction"); preserved != CUDA_SUCCESS) {
    return preserved;
  }
  *out = kernel.function;
  return CUDA_SUCCESS;
}

std::string LibraryRegistry::kernel_name(CUkernel handle) const {
  const std::lock_guard lock(m_mutex);
  const auto found = m_kernels.find(handle);
  return found == m_kernels.end() ? std::string() : found->second->name;
}

std::size_t LibraryRegistry::alive() const {
  const std::lock_guard lock(m_mutex);
  return m_libraries.size();
}

}  // namespace jitcache::fakes::fake_cuda
