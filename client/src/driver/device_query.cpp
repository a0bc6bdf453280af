#include <client/src/driver/device_query.hpp>

#include <client/src/driver/cu_result_text.hpp>

namespace jitcache::client::driver {

using common::ErrorCode;
using common::make_error;

common::Result<ComputeCapability> current_device_capability(const DriverApi& api) {
  if (!api.can_query_device())
    return make_error(ErrorCode::unsupported, "the driver lacks cuCtxGetDevice or cuDeviceGetAttribute");
  CUdevice device = 0;
  if (CUresult r = api.ctx_get_device(&device); r != CUDA_SUCCESS) {
    return make_error(ErrorCode::unavailable, "cuCtxGetDevice returned " + describe_result(r));
  }
  int major = 0;
  int minor = 0;
  if (CUresult r = api.device_get_attribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device);
      r != CUDA_SUCCESS) {
    return make_error(ErrorCode::unavailable,
                      "cuDeviceGetAttribute(COMPUTE_CAPABILITY_MAJOR) returned " + describe_result(r));
  }
  if (CUresult r = api.device_get_attribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, device);
      r != CUDA_SUCCESS) {
    return make_error(ErrorCode::unavailable,
                      "cuDeviceGetAttribute(COMPUTE_CAPABILITY_MINOR) returned " + describe_result(r));
  }
  if (major <= 0 || minor < 0 || minor > 9) {
    return make_error(ErrorCode::unavailable,
                      "the device reports compute capability " + std::to_string(major) + "." + std::to_string(minor));
  }
  return ComputeCapability{static_cast<unsigned>(major), static_cast<unsigned>(minor)};
}

}  // namespace jitcache::client::driver
