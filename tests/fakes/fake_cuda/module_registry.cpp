#include <tests/fakes/fake_cuda/module_registry.hpp>

#include <algorithm>

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
  const auto found = m_modules.find(handle);
  if (found == m_modules.end()) return CUDA_ERROR_INVALID_HANDLE;
  if (found->second->owner == ModuleOwner::library) return CUDA_ERROR_NOT_PERMITTED;
  m_modules.erase(found);
  return CUDA_SUCCESS;
}

void ModuleRegistry::remove_library_module(CUmodule handle) {
  const std::lock_guard lock(m_mutex);
  m_modules.erase(handle);
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

std::string ModuleRegistry::function_name(CUfunction function) const {
  const std::lock_guard lock(m_mutex);
  for (const auto& [handle, module] : m_modules) {
    for (const auto& candidate : module->functions) {
      if (reinterpret_cast<CUfunction>(candidate.get()) == function) return candidate->name;
    }
  }
  return {};
}

std::size_t ModuleRegistry::alive() const {
  const std::lock_guard lock(m_mutex);
  return static_cast<std::size_t>(std::count_if(m_modules.begin(), m_modules.end(), [](const auto& entry) {
    return entry.second->owner == ModuleOwner::caller;
  }));
}

}  // namespace jitcache::fakes::fake_cuda
