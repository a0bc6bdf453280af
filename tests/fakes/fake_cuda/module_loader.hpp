// cuModuleLoadData / cuModuleLoadDataEx as the driver behaves (docs/driver-facts.md §3, §4): classify the image,
// then load a cubin that runs on the device, JIT PTX with nvJitLink, or pick from a fat binary the
// image the driver would pick and do one of those with it.
//
// Outcomes: 200 for a malformed or truncated cubin, fat binary or non-PTX text (abort() instead for a
// cubin when FAKE_CUDA_CRASH_ON_TRUNCATED is set); 209 for a cubin (or fat binary) with nothing for
// this device; 222 for a PTX ISA newer than the driver's JIT; 218 for PTX the JIT rejects, with the
// compiler's log in CU_JIT_ERROR_LOG_BUFFER; 1 for bad arguments or options; or an injected failure.
// Thread safety: may be called from any thread; loads run concurrently (FakeDriver's members are
// thread-safe and every compile has its own nvJitLink session).
#pragma once

#include <cuda.h>

namespace jitcache::fakes::fake_cuda {

CUresult load_module(CUmodule* module, const void* image, unsigned option_count, CUjit_option* options,
                     void** option_values);

}  // namespace jitcache::fakes::fake_cuda
