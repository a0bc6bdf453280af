// Where a load's image ends up. The load flow (load_flow.hpp) decides which bytes to load — the
// caller's image as given, or a finished cubin from the cache or a compile — and a target loads
// them: into a CUmodule (cuModuleLoadData*, the C API) or into a CUlibrary (cuLibraryLoadData, for
// the preload library: library_target.hpp). The target also says which device the image is chosen
// and keyed for, since a module belongs to the current context and a library to every device.
// Thread safety: one target per load, used by that load's thread only.
#pragma once

#include <cuda.h>

#include <cstddef>
#include <string_view>

#include <client/src/driver/device_query.hpp>
#include <client/src/driver/driver_api.hpp>
#include <common/result.hpp>

namespace jitcache::client::loader {

class ImageTarget {
 public:
  virtual ~ImageTarget() = default;

  // False when the caller passed no place for the result (a null CUmodule*): the driver's own
  // answer to the arguments as given is then the only right one.
  virtual bool has_output() const = 0;
  // The device images are selected and keyed for; an error (ErrorCode::unavailable) says why there
  // is none, and the image then goes to the driver as given.
  virtual common::Result<driver::ComputeCapability> device() = 0;
  // The driver's own load of `image` with these JIT option arrays (the caller's, as given).
  virtual CUresult load_as_given(const void* image, unsigned count, CUjit_option* options, void** values) = 0;
  // A finished cubin of `size` bytes from the cache or a compile, checked by the caller. Its memory
  // lives only for the call; a target that must keep it copies it.
  virtual CUresult load_cubin(const void* cubin, std::size_t size) = 0;
  // The driver call a target stands for, as messages name it: "cuModuleLoadData".
  virtual std::string_view call_name() const = 0;
};

// A CUmodule in the current context (what jitcache_module_load_data_ex and cuModuleLoad* make).
class ModuleTarget final : public ImageTarget {
 public:
  ModuleTarget(const driver::DriverApi& api, CUmodule* module) : m_api(api), m_module(module) {}

  bool has_output() const override { return m_module != nullptr; }
  common::Result<driver::ComputeCapability> device() override { return driver::current_device_capability(m_api); }
  CUresult load_as_given(const void* image, unsigned count, CUjit_option* options, void** values) override {
    return m_api.module_load_data_ex(m_module, image, count, options, values);
  }
  CUresult load_cubin(const void* cubin, std::size_t) override { return m_api.module_load_data(m_module, cubin); }
  std::string_view call_name() const override { return "cuModuleLoadData"; }

 private:
  const driver::DriverApi& m_api;
  CUmodule* m_module;
};

}  // namespace jitcache::client::loader
