#include <client/src/loader/library_target.hpp>

#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include <client/src/driver/cu_result_text.hpp>
#include <client/src/driver/load_error_class.hpp>
#include <client/src/loader/preserved_images.hpp>

namespace jitcache::client::loader {

using common::ErrorCode;
using common::make_error;

bool LibraryOptions::preserves_binary() const {
  // Rationale: how the option's value is read is not documented, and callers pass it with NULL
  // values (docs/driver-facts.md §6); keeping a copy the driver did not need costs only memory, so
  // the option's presence is enough.
  if (options == nullptr) return false;
  for (unsigned i = 0; i < count; ++i) {
    if (options[i] == CU_LIBRARY_BINARY_IS_PRESERVED) return true;
  }
  return false;
}

common::Result<driver::ComputeCapability> common_device_capability(const driver::DriverApi& api) {
  if (api.device_get_count == nullptr || api.device_get == nullptr || api.device_get_attribute == nullptr) {
    return make_error(ErrorCode::unavailable, "the driver lacks cuDeviceGetCount or cuDeviceGet");
  }
  int count = 0;
  if (CUresult r = api.device_get_count(&count); r != CUDA_SUCCESS || count <= 0) {
    return make_error(ErrorCode::unavailable,
                      "cuDeviceGetCount returned " +
                          (r != CUDA_SUCCESS ? driver::describe_result(r) : std::string("no devices")));
  }
  std::optional<driver::ComputeCapability> shared;
  for (int ordinal = 0; ordinal < count; ++ordinal) {
    CUdevice device = 0;
    int major = 0;
    int minor = 0;
    CUresult r = api.device_get(&device, ordinal);
    if (r == CUDA_SUCCESS) r = api.device_get_attribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device);
    if (r == CUDA_SUCCESS) r = api.device_get_attribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, device);
    if (r != CUDA_SUCCESS) {
      return make_error(ErrorCode::unavailable, "device " + std::to_string(ordinal) +
                                                    ": the compute capability query returned " +
                                                    driver::describe_result(r));
    }
    const driver::ComputeCapability cc{static_cast<unsigned>(major), static_cast<unsigned>(minor)};
    if (!shared) {
      shared = cc;
    } else if (shared->major != cc.major || shared->minor != cc.minor) {
      return make_error(ErrorCode::unavailable, "devices of different compute capability (" +
                                                    std::to_string(shared->sm()) + " and " + std::to_string(cc.sm()) +
                                                    ") share every library, so none is keyed for one of them");
    }
  }
  return *shared;
}

common::Result<driver::ComputeCapability> LibraryTarget::device() { return common_device_capability(m_api); }

CUresult LibraryTarget::load_as_given(const void* image, unsigned count, CUjit_option* options, void** values) {
  if (m_file != nullptr && m_api.library_load_from_file != nullptr) {
    return m_api.library_load_from_file(m_library, m_file, options, values, count, m_options.options, m_options.values,
                                        m_options.count);
  }
  return m_api.library_load_data(m_library, image, options, values, count, m_options.options, m_options.values,
                                 m_options.count);
}

CUresult LibraryTarget::load_cubin(const void* cubin, std::size_t size) {
  std::vector<std::uint8_t> kept;
  const void* code = cubin;
  if (m_options.preserves_binary()) {
    const auto* bytes = static_cast<const std::uint8_t*>(cubin);
    kept.assign(bytes, bytes + size);
    code = kept.data();
  }
  OptionArrays jit = m_jit.as_given();
  CUresult result = m_api.library_load_data(m_library, code, jit.options_data(), jit.values_data(), jit.count(),
                                            m_options.options, m_options.values, m_options.count);
  if (result != CUDA_SUCCESS) return result;
  // The load itself says nothing about the image (docs/driver-facts.md §0.2): ask for its kernels.
  if (m_api.library_get_kernel_count != nullptr) {
    unsigned kernels = 0;
    const CUresult probe = m_api.library_get_kernel_count(&kernels, *m_library);
    if (driver::classify_load_error(probe) == driver::LoadErrorClass::bad_image) {
      if (m_api.library_unload != nullptr) m_api.library_unload(*m_library);
      *m_library = nullptr;
      return probe;
    }
  }
  if (!kept.empty()) keep_preserved_image(*m_library, std::move(kept));
  return CUDA_SUCCESS;
}

}  // namespace jitcache::client::loader
