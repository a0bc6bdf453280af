// CUresult names for messages: every error the client reports keeps the raw value and its name
// ("CUDA_ERROR_INVALID_PTX (218)"). The name comes from jitcache's own table (proto/cu_result_names.hpp,
// shared with the daemon and the fake driver), so it is available even when the driver is missing
// or lacks cuGetErrorName. Thread safety: pure functions.
#pragma once

#include <cuda.h>

#include <string>
#include <string_view>

namespace jitcache::client::driver {

// "CUDA_ERROR_INVALID_PTX"; "CUDA_ERROR_UNKNOWN_CODE" for a value not in the table.
std::string_view static_result_name(CUresult result);

// "CUDA_ERROR_INVALID_PTX (218)".
std::string describe_result(CUresult result);

}  // namespace jitcache::client::driver
