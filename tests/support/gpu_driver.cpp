#include <tests/support/gpu_driver.hpp>

#include <dlfcn.h>

#include <climits>
#include <cstdlib>

namespace jitcache::testing {

using common::ErrorCode;
using common::make_error;

namespace {

using GetProcAddress = CUresult (*)(const char*, void**, int, cuuint64_t, CUdriverProcAddressQueryResult*);

// One entry point: the base name, the API version whose ABI the pointer's type has
// (cudaTypedefs.h PFN_<name>_v<version>), and where it goes.
struct Entry {
  const char* name;
  int version;
  void** slot;
};

template <class Fn>
void** slot_of(Fn& pointer) {
  return reinterpret_cast<void**>(&pointer);
}

// e.g. /usr/lib/x86_64-linux-gnu/libcuda.so.580.159.04 for "libcuda.so.1".
std::string file_of(void* symbol) {
  Dl_info info{};
  if (::dladdr(symbol, &info) == 0 || info.dli_fname == nullptr) return "unknown";
  char resolved[PATH_MAX];
  return ::realpath(info.dli_fname, resolved) != nullptr ? resolved : info.dli_fname;
}

std::string dl_error_text() {
  const char* text = ::dlerror();
  return text != nullptr ? text : "unknown dlopen error";
}

}  // namespace

std::string GpuDriver::describe(CUresult result) const {
  const char* name = nullptr;
  if (get_error_name == nullptr || get_error_name(result, &name) != CUDA_SUCCESS || name == nullptr) {
    name = "CUresult";
  }
  return std::string(name) + " (" + std::to_string(static_cast<int>(result)) + ")";
}

std::string gpu_driver_path() {
  const char* configured = std::getenv("JITCACHE_CUDA_DRIVER");
  return (configured != nullptr && *configured != '\0') ? configured : "libcuda.so.1";
}

common::Result<GpuDriver> open_gpu() {
  GpuDriver gpu;
  gpu.library = gpu_driver_path();
  void* library = ::dlopen(gpu.library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    return make_error(ErrorCode::unavailable, "no CUDA driver: cannot open " + gpu.library + ": " + dl_error_text());
  }
  auto get_proc_address = reinterpret_cast<GetProcAddress>(::dlsym(library, "cuGetProcAddress_v2"));
  if (get_proc_address == nullptr) {
    return make_error(ErrorCode::unavailable,
                      gpu.library + " has no cuGetProcAddress_v2 (a driver for CUDA 12 or later is needed)");
  }

  const Entry entries[] = {
      {"cuInit", 2000, slot_of(gpu.init)},
      {"cuDriverGetVersion", 2020, slot_of(gpu.driver_get_version)},
      {"cuGetErrorName", 6000, slot_of(gpu.get_error_name)},
      {"cuDeviceGetCount", 2000, slot_of(gpu.device_get_count)},
      {"cuDeviceGet", 2000, slot_of(gpu.device_get)},
      {"cuDeviceGetAttribute", 2000, slot_of(gpu.device_get_attribute)},
      {"cuDeviceGetName", 2000, slot_of(gpu.device_get_name)},
      {"cuDevicePrimaryCtxRetain", 7000, slot_of(gpu.primary_ctx_retain)},
      {"cuDevicePrimaryCtxRelease", 11000, slot_of(gpu.primary_ctx_release)},
      {"cuCtxSetCurrent", 4000, slot_of(gpu.ctx_set_current)},
      // Rationale: version 13000 of cuCtxSynchronize takes a context; 2000 is cuda.h's (void) form.
      {"cuCtxSynchronize", 2000, slot_of(gpu.ctx_synchronize)},
      {"cuModuleLoadData", 2000, slot_of(gpu.module_load_data)},
      {"cuModuleLoadDataEx", 2010, slot_of(gpu.module_load_data_ex)},
      {"cuModuleUnload", 2000, slot_of(gpu.module_unload)},
      {"cuModuleGetFunction", 2000, slot_of(gpu.module_get_function)},
      {"cuMemAlloc", 3020, slot_of(gpu.mem_alloc)},
      {"cuMemFree", 3020, slot_of(gpu.mem_free)},
      {"cuMemcpyHtoD", 3020, slot_of(gpu.memcpy_htod)},
      {"cuMemcpyDtoH", 3020, slot_of(gpu.memcpy_dtoh)},
      {"cuLaunchKernel", 4000, slot_of(gpu.launch_kernel)},
  };
  for (const Entry& entry : entries) {
    CUdriverProcAddressQueryResult status = CU_GET_PROC_ADDRESS_SUCCESS;
    const CUresult result =
        get_proc_address(entry.name, entry.slot, entry.version, CU_GET_PROC_ADDRESS_DEFAULT, &status);
    if (result != CUDA_SUCCESS || status != CU_GET_PROC_ADDRESS_SUCCESS || *entry.slot == nullptr) {
      return make_error(ErrorCode::unavailable, gpu.library + " does not offer " + entry.name + " (version " +
                                                    std::to_string(entry.version) + "): cuGetProcAddress returned " +
                                                    std::to_string(static_cast<int>(result)) + ", status " +
                                                    std::to_string(static_cast<int>(status)));
    }
  }

  gpu.library_file = file_of(reinterpret_cast<void*>(get_proc_address));

  // The toolkit's stub libcuda answers every call with CUDA_ERROR_STUB_LIBRARY; so does a driver
  // whose kernel module is missing with CUDA_ERROR_NO_DEVICE or similar, both at cuInit.
  if (CUresult r = gpu.init(0); r != CUDA_SUCCESS) {
    return make_error(ErrorCode::unavailable, "cuInit returned " + gpu.describe(r));
  }
  if (CUresult r = gpu.driver_get_version(&gpu.api_version); r != CUDA_SUCCESS) {
    return make_error(ErrorCode::unavailable, "cuDriverGetVersion returned " + gpu.describe(r));
  }
  int count = 0;
  if (CUresult r = gpu.device_get_count(&count); r != CUDA_SUCCESS || count == 0) {
    return make_error(ErrorCode::unavailable, r != CUDA_SUCCESS ? "cuDeviceGetCount returned " + gpu.describe(r)
                                                                : std::string("the driver sees no CUDA device"));
  }
  if (CUresult r = gpu.device_get(&gpu.device, 0); r != CUDA_SUCCESS) {
    return make_error(ErrorCode::unavailable, "cuDeviceGet(0) returned " + gpu.describe(r));
  }
  char name[256] = {};
  if (gpu.device_get_name(name, sizeof(name) - 1, gpu.device) == CUDA_SUCCESS) gpu.device_name = name;
  if (CUresult r = gpu.device_get_attribute(&gpu.cc_major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, gpu.device);
      r != CUDA_SUCCESS) {
    return make_error(ErrorCode::unavailable, "cuDeviceGetAttribute(CC major) returned " + gpu.describe(r));
  }
  if (CUresult r = gpu.device_get_attribute(&gpu.cc_minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, gpu.device);
      r != CUDA_SUCCESS) {
    return make_error(ErrorCode::unavailable, "cuDeviceGetAttribute(CC minor) returned " + gpu.describe(r));
  }
  if (CUresult r = gpu.primary_ctx_retain(&gpu.context, gpu.device); r != CUDA_SUCCESS) {
    return make_error(ErrorCode::unavailable, "cuDevicePrimaryCtxRetain returned " + gpu.describe(r));
  }
  if (CUresult r = gpu.make_current(); r != CUDA_SUCCESS) {
    gpu.primary_ctx_release(gpu.device);
    return make_error(ErrorCode::unavailable, "cuCtxSetCurrent returned " + gpu.describe(r));
  }
  return gpu;
}

}  // namespace jitcache::testing
