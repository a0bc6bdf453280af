// The names and descriptions of the cudaError_t values the fake cudart returns, worded as the real
// cudart words them; any other value is "unrecognized error code", as cudart answers for a value it
// does not know.
// Thread safety: pure functions over a constant table; the strings live for the program.
#pragma once

#include <driver_types.h>

namespace jitcache::fakes::fake_cudart {

const char* runtime_error_name(cudaError_t error);
const char* runtime_error_string(cudaError_t error);

// What a driver CUresult of cuGetProcAddress means to a cudart caller.
cudaError_t runtime_error_from_driver(int driver_result);

}  // namespace jitcache::fakes::fake_cudart
