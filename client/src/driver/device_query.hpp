// The current context's device as the cache key needs it: its compute capability. Cheap (two
// attribute queries); done on every load so that a thread switching contexts is keyed correctly.
// Thread safety: as the driver's calls.
#pragma once

#include <client/src/driver/driver_api.hpp>
#include <common/result.hpp>

namespace jitcache::client::driver {

struct ComputeCapability {
  unsigned major = 0;
  unsigned minor = 0;
  unsigned sm() const { return major * 10 + minor; }
};

// Errors (ErrorCode::unavailable) name the call and its CUresult, e.g. no current context
// (CUDA_ERROR_INVALID_CONTEXT from cuCtxGetDevice).
common::Result<ComputeCapability> current_device_capability(const DriverApi& api);

}  // namespace jitcache::client::driver
