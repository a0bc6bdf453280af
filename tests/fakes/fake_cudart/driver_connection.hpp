// The fake cudart's way to the driver, as dynamic cudart's: dlopen("libcuda.so.1"), dlsym
// "cuGetProcAddress_v2" on that handle, ask it for cuInit and call cuInit(0), then ask it for every
// entry point (docs/driver-facts.md §6, issue NVlabs/NVBit#134). Whatever libcuda.so.1 the dynamic
// linker finds is used: the fake driver when a test put its directory on LD_LIBRARY_PATH or already
// opened it (a loaded object answers to its soname), the preload library's interposition if one is in
// front, the real driver on a GPU machine.
// Thread safety: the connection is made once, on first use, by whichever thread gets there first
// (a function-local static); afterwards it is immutable. A failure is final for the process, as
// cudart's initialisation failure is.
#pragma once

#include <cuda.h>
#include <cudaTypedefs.h>

#include <driver_types.h>

namespace jitcache::fakes::fake_cudart {

struct DriverConnection {
  // cudaSuccess, cudaErrorInsufficientDriver (no libcuda.so.1, or no cuGetProcAddress_v2 in it) or
  // cudaErrorInitializationError (no cuInit or cuDriverGetVersion, or cuInit failed).
  cudaError_t status = cudaSuccess;
  PFN_cuGetProcAddress_v12000 get_proc_address = nullptr;
  PFN_cuDriverGetVersion_v2020 driver_get_version = nullptr;

  // cuDriverGetVersion now (a test may change the fake driver's version), 0 without a driver.
  int driver_version() const;
};

const DriverConnection& driver_connection();

}  // namespace jitcache::fakes::fake_cudart
