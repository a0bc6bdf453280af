// The load flow's target for cuLibraryLoadData (image_target.hpp): what libjitcache-preload.so
// uses so that a library the driver would JIT is loaded from the cache as a cubin, while cudart's
// own launch path (its host function table) keeps working (docs/transparent.md "Libraries").
//
// A library is loaded into every device's contexts, now and later (docs/driver-facts.md §6), so an
// image is chosen and keyed for a device only when every device of the process has the same compute
// capability; otherwise the caller's image goes to the driver as given.
// cuLibraryLoadData succeeds even for an image the driver cannot use and reports it at
// cuLibraryGetKernel (docs/driver-facts.md §0.2); a cached cubin is therefore probed with
// cuLibraryGetKernelCount, so that a bad entry is reported and rebuilt as for a module.
// With CU_LIBRARY_BINARY_IS_PRESERVED the driver may keep using the bytes it was given until
// cuLibraryUnload: a cached cubin is then copied and kept (preserved_images.hpp).
// Thread safety: one target per load.
#pragma once

#include <client/src/loader/caller_options.hpp>
#include <client/src/loader/image_target.hpp>

namespace jitcache::client::loader {

struct LibraryOptions {
  CUlibraryOption* options = nullptr;
  void** values = nullptr;
  unsigned count = 0;
  // Whether CU_LIBRARY_BINARY_IS_PRESERVED is among the options (whatever its value).
  bool preserves_binary() const;
};

class LibraryTarget final : public ImageTarget {
 public:
  // `file`: the path of cuLibraryLoadFromFile, whose own call is then the load as given (so the
  // driver reads the file itself and nothing of ours must outlive the call); nullptr for
  // cuLibraryLoadData.
  LibraryTarget(const driver::DriverApi& api, CUlibrary* library, const CallerOptions& jit, LibraryOptions options,
                const char* file = nullptr)
      : m_api(api), m_library(library), m_jit(jit), m_options(options), m_file(file) {}

  bool has_output() const override { return m_library != nullptr; }
  common::Result<driver::ComputeCapability> device() override;
  CUresult load_as_given(const void* image, unsigned count, CUjit_option* options, void** values) override;
  CUresult load_cubin(const void* cubin, std::size_t size) override;
  std::string_view call_name() const override {
    return m_file != nullptr ? "cuLibraryLoadFromFile" : "cuLibraryLoadData";
  }

 private:
  const driver::DriverApi& m_api;
  CUlibrary* m_library;
  const CallerOptions& m_jit;
  LibraryOptions m_options;
  const char* m_file;
};

// The compute capability every device of the process shares, or an error naming the first two that
// differ (or the call that failed). Asked on every library load: a count and two attribute queries
// per device, a fraction of a microsecond each.
common::Result<driver::ComputeCapability> common_device_capability(const driver::DriverApi& api);

}  // namespace jitcache::client::loader
