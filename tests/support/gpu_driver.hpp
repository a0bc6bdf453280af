// The CUDA driver as the GPU tests and benchmarks use it: opened at run time with dlopen and
// resolved through cuGetProcAddress, like libjitcache itself, so that no test program links
// libcuda and every one of them starts (and says why it skips) on a machine without a GPU.
//
// open_gpu() also initialises the driver and makes device 0's primary context current on the calling
// thread; an Error says what is missing (no libcuda, the toolkit's stub, no device, no context).
// Thread safety: the object is immutable after open_gpu(); the context is current only on the thread
// that opened it (call make_current() on others).
#pragma once

#include <cuda.h>

#include <string>

#include <common/result.hpp>

namespace jitcache::testing {

struct GpuDriver {
  // Each pointer has the ABI of the cuda.h declaration its type names (see the versions in
  // gpu_driver.cpp: cuCtxSynchronize, for one, has a different ABI at version 13000).
  CUresult (*init)(unsigned int) = nullptr;
  CUresult (*driver_get_version)(int*) = nullptr;
  CUresult (*get_error_name)(CUresult, const char**) = nullptr;
  CUresult (*device_get_count)(int*) = nullptr;
  CUresult (*device_get)(CUdevice*, int) = nullptr;
  CUresult (*device_get_attribute)(int*, CUdevice_attribute, CUdevice) = nullptr;
  CUresult (*device_get_name)(char*, int, CUdevice) = nullptr;
  CUresult (*primary_ctx_retain)(CUcontext*, CUdevice) = nullptr;
  CUresult (*primary_ctx_release)(CUdevice) = nullptr;
  CUresult (*ctx_set_current)(CUcontext) = nullptr;
  CUresult (*ctx_synchronize)() = nullptr;
  CUresult (*module_load_data)(CUmodule*, const void*) = nullptr;
  CUresult (*module_load_data_ex)(CUmodule*, const void*, unsigned int, CUjit_option*, void**) = nullptr;
  CUresult (*module_unload)(CUmodule) = nullptr;
  CUresult (*module_get_function)(CUfunction*, CUmodule, const char*) = nullptr;
  CUresult (*mem_alloc)(CUdeviceptr*, size_t) = nullptr;
  CUresult (*mem_free)(CUdeviceptr) = nullptr;
  CUresult (*memcpy_htod)(CUdeviceptr, const void*, size_t) = nullptr;
  CUresult (*memcpy_dtoh)(void*, CUdeviceptr, size_t) = nullptr;
  CUresult (*launch_kernel)(CUfunction, unsigned int, unsigned int, unsigned int, unsigned int, unsigned int,
                            unsigned int, unsigned int, CUstream, void**, void**) = nullptr;

  std::string library;       // what was dlopen'ed
  std::string library_file;  // the file behind it, symlinks resolved (names the driver build)
  int api_version = 0;       // cuDriverGetVersion, e.g. 13000
  CUdevice device = 0;
  CUcontext context = nullptr;
  int cc_major = 0;
  int cc_minor = 0;
  std::string device_name;  // e.g. "NVIDIA H200"

  int sm() const { return cc_major * 10 + cc_minor; }
  // "CUDA_ERROR_NO_BINARY_FOR_GPU (209)".
  std::string describe(CUresult result) const;
  // Makes the primary context current on the calling thread.
  CUresult make_current() const { return ctx_set_current(context); }
};

// $JITCACHE_CUDA_DRIVER (as libjitcache, so both open the same driver) or "libcuda.so.1".
std::string gpu_driver_path();

// Opens the driver, resolves every entry point above, initialises it and makes device 0's primary
// context current. The library is never closed and the context never released: the modules a test
// loads live as long as the process.
common::Result<GpuDriver> open_gpu();

}  // namespace jitcache::testing
