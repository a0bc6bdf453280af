// The entry points of the fake dynamic cudart (libcudart.so.13): cudaGetDriverEntryPoint and
// cudaGetDriverEntryPointByVersion in their CUDA 12+ form with a cudaDriverEntryPointQueryResult*
// (the CUDA 13 headers have no other), their _ptsz variants (the real libcudart.so.13 exports them
// too), cudaRuntimeGetVersion, cudaDriverGetVersion, cudaGetErrorName and cudaGetErrorString
// (docs/driver-facts.md §5).
//
// Both entry-point calls ask the driver's cuGetProcAddress_v2 (driver_connection.hpp), passing the
// flags through (cudaEnable* equal CU_GET_PROC_ADDRESS_*; the _ptsz forms turn DEFAULT into
// PER_THREAD_DEFAULT_STREAM, as cuda.h's inline wrapper of cuGetProcAddress_v2_ptsz does) and the
// status back (the enums have the same values). cudaGetDriverEntryPoint asks at the runtime's own
// version, CUDART_VERSION (cuda_runtime_api.h); [I] on an older driver of the same major it asks at
// the driver's version instead, since cuGetProcAddress refuses a version above its own, and on an
// older major it is cudaErrorInsufficientDriver, as cudart's initialisation would be.
// Thread safety: any thread.
#include <tests/fakes/fake_cudart/driver_connection.hpp>
#include <tests/fakes/fake_cudart/runtime_errors.hpp>

#include <cuda_runtime_api.h>

namespace fake = jitcache::fakes::fake_cudart;

namespace {

constexpr unsigned long long k_stream_flags = cudaEnableLegacyStream | cudaEnablePerThreadDefaultStream;

cudaError_t entry_point(const char* symbol, void** function, int version, unsigned long long flags,
                        cudaDriverEntryPointQueryResult* status) {
  if (symbol == nullptr || function == nullptr) return cudaErrorInvalidValue;
  *function = nullptr;
  const fake::DriverConnection& driver = fake::driver_connection();
  if (driver.status != cudaSuccess) return driver.status;
  CUdriverProcAddressQueryResult found = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
  const CUresult result = driver.get_proc_address(symbol, function, version, flags, &found);
  if (result != CUDA_SUCCESS) return fake::runtime_error_from_driver(result);
  if (status != nullptr) *status = static_cast<cudaDriverEntryPointQueryResult>(found);
  return cudaSuccess;
}

cudaError_t entry_point_at_runtime_version(const char* symbol, void** function, unsigned long long flags,
                                           cudaDriverEntryPointQueryResult* status) {
  const fake::DriverConnection& driver = fake::driver_connection();
  int version = CUDART_VERSION;
  const int driver_version = driver.driver_version();
  if (driver.status == cudaSuccess && driver_version < version) {
    if (driver_version / 1000 < CUDART_VERSION / 1000) return cudaErrorInsufficientDriver;
    version = driver_version;
  }
  return entry_point(symbol, function, version, flags, status);
}

unsigned long long per_thread_by_default(unsigned long long flags) {
  return (flags & k_stream_flags) == 0 ? flags | cudaEnablePerThreadDefaultStream : flags;
}

}  // namespace

extern "C" {

cudaError_t CUDARTAPI cudaGetDriverEntryPoint(const char* symbol, void** funcPtr, unsigned long long flags,
                                              cudaDriverEntryPointQueryResult* driverStatus) {
  return entry_point_at_runtime_version(symbol, funcPtr, flags, driverStatus);
}

cudaError_t CUDARTAPI cudaGetDriverEntryPoint_ptsz(const char* symbol, void** funcPtr, unsigned long long flags,
                                                   cudaDriverEntryPointQueryResult* driverStatus) {
  return entry_point_at_runtime_version(symbol, funcPtr, per_thread_by_default(flags), driverStatus);
}

cudaError_t CUDARTAPI cudaGetDriverEntryPointByVersion(const char* symbol, void** funcPtr, unsigned int cudaVersion,
                                                       unsigned long long flags,
                                                       cudaDriverEntryPointQueryResult* driverStatus) {
  return entry_point(symbol, funcPtr, static_cast<int>(cudaVersion), flags, driverStatus);
}

cudaError_t CUDARTAPI cudaGetDriverEntryPointByVersion_ptsz(const char* symbol, void** funcPtr,
                                                            unsigned int cudaVersion, unsigned long long flags,
                                                            cudaDriverEntryPointQueryResult* driverStatus) {
  return entry_point(symbol, funcPtr, static_cast<int>(cudaVersion), per_thread_by_default(flags), driverStatus);
}

cudaError_t CUDARTAPI cudaRuntimeGetVersion(int* runtimeVersion) {
  if (runtimeVersion == nullptr) return cudaErrorInvalidValue;
  *runtimeVersion = CUDART_VERSION;
  return cudaSuccess;
}

cudaError_t CUDARTAPI cudaDriverGetVersion(int* driverVersion) {
  if (driverVersion == nullptr) return cudaErrorInvalidValue;
  // cuda_runtime_api.h: "If no driver is installed, then 0 is returned as the driver version."
  *driverVersion = fake::driver_connection().driver_version();
  return cudaSuccess;
}

const char* CUDARTAPI cudaGetErrorName(cudaError_t error) { return fake::runtime_error_name(error); }

const char* CUDARTAPI cudaGetErrorString(cudaError_t error) { return fake::runtime_error_string(error); }

}  // extern "C"
