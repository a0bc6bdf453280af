// C++ interface of libjitcache: an owning module handle and loads that return it.
//
//   jitcache::Module module;
//   CUresult r = jitcache::load_data(module, ptx);                 // as cuModuleLoadData
//   if (r != CUDA_SUCCESS) { auto info = jitcache::last_load_info(); ... info.reason ... }
//   cuModuleGetFunction(&f, module.get(), "kernel");
//
// Module unloads through the same driver the loads used (jitcache_module_unload) when it is
// destroyed. Nothing here throws; results are CUresult values as the driver's. Thread safety: as the
// C API; a Module object itself is not synchronised.
#pragma once

#include <jitcache/jitcache.h>

#include <span>
#include <utility>

namespace jitcache {

class Module {
 public:
  Module() noexcept = default;
  explicit Module(CUmodule handle) noexcept : m_handle(handle) {}
  Module(Module&& other) noexcept : m_handle(std::exchange(other.m_handle, nullptr)) {}
  Module& operator=(Module&& other) noexcept {
    if (this != &other) reset(std::exchange(other.m_handle, nullptr));
    return *this;
  }
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;
  ~Module() { reset(); }

  CUmodule get() const noexcept { return m_handle; }
  explicit operator bool() const noexcept { return m_handle != nullptr; }
  // Gives up ownership: the caller unloads the module.
  CUmodule release() noexcept { return std::exchange(m_handle, nullptr); }
  // Unloads the module held (if any) and takes `handle`.
  void reset(CUmodule handle = nullptr) noexcept {
    if (m_handle != nullptr) jitcache_module_unload(m_handle);
    m_handle = handle;
  }

 private:
  CUmodule m_handle = nullptr;
};

// As cuModuleLoadDataEx; `options` and `values` have the same length (the driver's contract).
// On success `out` owns the new module; on failure `out` is left as it was.
inline CUresult load_data(Module& out, const void* image, std::span<CUjit_option> options = {},
                          std::span<void*> values = {}) noexcept {
  if (options.size() != values.size()) return CUDA_ERROR_INVALID_VALUE;
  CUmodule handle = nullptr;
  CUresult result = jitcache_module_load_data_ex(&handle, image, static_cast<unsigned>(options.size()),
                                                 options.empty() ? nullptr : options.data(),
                                                 values.empty() ? nullptr : values.data());
  if (result == CUDA_SUCCESS) out.reset(handle);
  return result;
}

// As cuModuleLoad.
inline CUresult load_file(Module& out, const char* path) noexcept {
  CUmodule handle = nullptr;
  CUresult result = jitcache_module_load(&handle, path);
  if (result == CUDA_SUCCESS) out.reset(handle);
  return result;
}

// The calling thread's last load: outcome, reason, key, stage, timings.
inline jitcache_load_info last_load_info() noexcept {
  jitcache_load_info info{};
  info.struct_size = sizeof(info);
  jitcache_last_load_info(&info);
  return info;
}

inline jitcache_counters counters() noexcept {
  jitcache_counters counters{};
  counters.struct_size = sizeof(counters);
  jitcache_get_counters(&counters);
  return counters;
}

}  // namespace jitcache
