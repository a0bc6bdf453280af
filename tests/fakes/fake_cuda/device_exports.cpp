// The driver's version, error, device and context entry points, and cuGetExportTable, under their
// ABI names. Thread safety: every entry point may be called from any thread.
//
// Devices follow FAKE_CUDA_DEVICES (device 0 the current context's); the context is one dummy that is
// always current. cuGetExportTable answers CUDA_ERROR_NOT_SUPPORTED with a NULL table for every id,
// and CUDA_ERROR_INVALID_VALUE for NULL arguments (docs/driver-facts.md §5): the private tables cudart
// asks for are undocumented, and a caller that needs one then fails cleanly instead of calling into a
// table the fake would have to invent.
#include <tests/fakes/fake_cuda/abi_declarations.hpp>
#include <tests/fakes/fake_cuda/error_names.hpp>
#include <tests/fakes/fake_cuda/fake_driver.hpp>

#include <cuda.h>

namespace fake = jitcache::fakes::fake_cuda;

namespace {

// A stand-in for the primary context: a non-null handle nothing dereferences.
int g_context_tag = 0;

int device_attribute(CUdevice_attribute attribute, unsigned cc) {
  switch (attribute) {
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: return static_cast<int>(cc / 10);
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: return static_cast<int>(cc % 10);
    case CU_DEVICE_ATTRIBUTE_WARP_SIZE: return 32;
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK: return 1024;
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: return 132;  // an H100/H200's SM count
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK: return 48 * 1024;
    case CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK: return 64 * 1024;
    default: return 0;
  }
}

CUresult context_device(CUdevice* device) {
  if (auto code = fake::FakeDriver::instance().injected_failure(fake::FaultPoint::ctx)) return *code;
  if (device == nullptr) return CUDA_ERROR_INVALID_VALUE;
  *device = 0;
  return CUDA_SUCCESS;
}

}  // namespace

extern "C" {

CUresult CUDAAPI cuInit(unsigned int flags) { return flags == 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE; }

CUresult CUDAAPI cuDriverGetVersion(int* version) {
  if (version == nullptr) return CUDA_ERROR_INVALID_VALUE;
  *version = fake::FakeDriver::instance().settings.get().driver_version;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuGetErrorName(CUresult error, const char** name) { return fake::error_name(error, name); }
CUresult CUDAAPI cuGetErrorString(CUresult error, const char** description) {
  return fake::error_string(error, description);
}

CUresult CUDAAPI cuDeviceGetCount(int* count) {
  if (count == nullptr) return CUDA_ERROR_INVALID_VALUE;
  *count = static_cast<int>(fake::FakeDriver::instance().settings.get().device_ccs.size());
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceGet(CUdevice* device, int ordinal) {
  if (device == nullptr) return CUDA_ERROR_INVALID_VALUE;
  const std::size_t count = fake::FakeDriver::instance().settings.get().device_ccs.size();
  if (ordinal < 0 || static_cast<std::size_t>(ordinal) >= count) return CUDA_ERROR_INVALID_DEVICE;
  *device = ordinal;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceGetAttribute(int* value, CUdevice_attribute attribute, CUdevice device) {
  if (value == nullptr || attribute < 1 || attribute >= CU_DEVICE_ATTRIBUTE_MAX) return CUDA_ERROR_INVALID_VALUE;
  const std::vector<unsigned> ccs = fake::FakeDriver::instance().settings.get().device_ccs;
  if (device < 0 || static_cast<std::size_t>(device) >= ccs.size()) return CUDA_ERROR_INVALID_DEVICE;
  *value = device_attribute(attribute, ccs[static_cast<std::size_t>(device)]);
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxGetCurrent(CUcontext* context) {
  if (context == nullptr) return CUDA_ERROR_INVALID_VALUE;
  *context = reinterpret_cast<CUcontext>(&g_context_tag);
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxGetDevice(CUdevice* device) { return context_device(device); }
CUresult CUDAAPI cuCtxGetDevice_v2(CUdevice* device, CUcontext) { return context_device(device); }

CUresult CUDAAPI cuGetExportTable(const void** table, const CUuuid* id) {
  if (table == nullptr || id == nullptr) return CUDA_ERROR_INVALID_VALUE;
  *table = nullptr;
  return CUDA_ERROR_NOT_SUPPORTED;
}

}  // extern "C"
