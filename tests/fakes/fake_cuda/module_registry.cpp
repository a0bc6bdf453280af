#include <tests/fakes/fake_cuda/module_registry.hpp>

#include <cstring>

namespace jitcache::fakes::fake_cuda {

std::unique_ptr<FakeModule> make_module(std::vector<std::byte> cubin, const std::vector<std::string>& kernels,
                                        bool unresolved) {
  auto module = std::make_unique<FakeModule>();
  module->cubin = std::move(cubin);
  if (!unresolved) {
    for (const std::string& kernel : kernels)
      module->functions.push_back(std::make_unique<FakeFunction>(FakeFunction{kernel}));
  }
  return module;
}

CUmodule ModuleRegistry::add(std::unique_ptr<FakeModule> module) {
  // The handle is the object's address: unique while it lives, and opaque to the caller.
  auto* handle = reinterpret_cast<CUmodule>(module.get());
  const std::lock_guard lock(m_mutex);
  m_modules.emplace(handle, std::move(module));
  return handle;
}

CUresult ModuleRegistry::remove(CUmodule handle) {
  const std::lock_guard lock(m_mutex);
  return m_modules.erase(handle) == 1 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

CUresult ModuleRegistry::get_function(CUmodule handle, const char* name, CUfunction* out) const {
  if (out == nullptr || name == nullptr) return CUDA_ERROR_INVALID_VALUE;
  const std::lock_guard lock(m_mutex);
  const auto found = m_modules.find(handle);
  if (found == m_modules.end()) return CUDA_ERROR_INVALID_HANDLE;
  for (const auto& function : found->second->functions) {
    if (function->name == name) {
      *out = reinterpret_cast<CUfunction>(function.get());
      return CUDA_SUCCESS;
    }
  }
  return CUDA_ERROR_NOT_FOUND;
}

std::size_t ModuleRegistry::alive() const {
  const std::lock_guard lock(m_mutex);
  return m_modules.size();
}

}  // namespace jitcache::fakes::fake_cuda
