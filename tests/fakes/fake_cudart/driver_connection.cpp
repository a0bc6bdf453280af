#include <tests/fakes/fake_cudart/driver_connection.hpp>

#include <dlfcn.h>

namespace jitcache::fakes::fake_cudart {
namespace {

template <class Pfn>
Pfn driver_entry(PFN_cuGetProcAddress_v12000 get_proc_address, const char* name, int version) {
  void* pfn = nullptr;
  CUdriverProcAddressQueryResult status{};
  if (get_proc_address(name, &pfn, version, CU_GET_PROC_ADDRESS_DEFAULT, &status) != CUDA_SUCCESS ||
      status != CU_GET_PROC_ADDRESS_SUCCESS) {
    return nullptr;
  }
  return reinterpret_cast<Pfn>(pfn);
}

DriverConnection connect() {
  DriverConnection connection;
  // Rationale: the handle is never closed; cudart keeps the driver for the life of the process.
  void* library = dlopen("libcuda.so.1", RTLD_NOW);
  if (library != nullptr) {
    connection.get_proc_address = reinterpret_cast<PFN_cuGetProcAddress_v12000>(dlsym(library, "cuGetProcAddress_v2"));
  }
  if (connection.get_proc_address == nullptr) {
    connection.status = cudaErrorInsufficientDriver;
    return connection;
  }
  const auto init = driver_entry<PFN_cuInit_v2000>(connection.get_proc_address, "cuInit", 2000);
  connection.driver_get_version =
      driver_entry<PFN_cuDriverGetVersion_v2020>(connection.get_proc_address, "cuDriverGetVersion", 2020);
  if (init == nullptr || connection.driver_get_version == nullptr || init(0) != CUDA_SUCCESS) {
    connection.status = cudaErrorInitializationError;
  }
  return connection;
}

}  // namespace

int DriverConnection::driver_version() const {
  int version = 0;
  if (status != cudaSuccess || driver_get_version(&version) != CUDA_SUCCESS) return 0;
  return version;
}

const DriverConnection& driver_connection() {
  static const DriverConnection connection = connect();
  return connection;
}

}  // namespace jitcache::fakes::fake_cudart
