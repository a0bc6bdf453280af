// The CUDA driver entry points the fake exports, under their real ABI names, and the table
// cuGetProcAddress resolves them from.
//
// cuda.h maps some names to versioned symbols (cuLinkCreate → cuLinkCreate_v2, cuGetProcAddress →
// cuGetProcAddress_v2); libcuda exports both the plain and the versioned names (docs/driver-facts.md §1), so
// the macros are undone below and both are defined. Which symbols leave the library is decided by
// fake_cuda.map. Thread safety: every entry point may be called from any thread.
#include <tests/fakes/fake_cuda/device_model.hpp>
#include <tests/fakes/fake_cuda/error_names.hpp>
#include <tests/fakes/fake_cuda/fake_driver.hpp>
#include <tests/fakes/fake_cuda/link_api.hpp>
#include <tests/fakes/fake_cuda/module_loader.hpp>
#include <tests/fakes/fake_cuda/proc_address.hpp>

#include <cuda.h>

#include <array>

#undef cuLinkCreate
#undef cuLinkAddData
#undef cuGetProcAddress

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
  *count = 1;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceGet(CUdevice* device, int ordinal) {
  if (device == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (ordinal != 0) return CUDA_ERROR_INVALID_DEVICE;
  *device = 0;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceGetAttribute(int* value, CUdevice_attribute attribute, CUdevice device) {
  if (value == nullptr || attribute < 1 || attribute >= CU_DEVICE_ATTRIBUTE_MAX) return CUDA_ERROR_INVALID_VALUE;
  if (device != 0) return CUDA_ERROR_INVALID_DEVICE;
  *value = device_attribute(attribute, fake::FakeDriver::instance().settings.get().cc);
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxGetCurrent(CUcontext* context) {
  if (context == nullptr) return CUDA_ERROR_INVALID_VALUE;
  *context = reinterpret_cast<CUcontext>(&g_context_tag);
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxGetDevice(CUdevice* device) { return context_device(device); }
CUresult CUDAAPI cuCtxGetDevice_v2(CUdevice* device, CUcontext) { return context_device(device); }

CUresult CUDAAPI cuModuleLoadData(CUmodule* module, const void* image) {
  return fake::load_module(module, image, 0, nullptr, nullptr);
}

CUresult CUDAAPI cuModuleLoadDataEx(CUmodule* module, const void* image, unsigned int count, CUjit_option* options,
                                    void** values) {
  return fake::load_module(module, image, count, options, values);
}

CUresult CUDAAPI cuModuleUnload(CUmodule module) { return fake::FakeDriver::instance().modules.remove(module); }

CUresult CUDAAPI cuModuleGetFunction(CUfunction* function, CUmodule module, const char* name) {
  return fake::FakeDriver::instance().modules.get_function(module, name, function);
}

CUresult CUDAAPI cuLinkCreate_v2(unsigned int count, CUjit_option* options, void** values, CUlinkState* state) {
  return fake::link_create(count, options, values, state);
}
CUresult CUDAAPI cuLinkCreate(unsigned int count, CUjit_option* options, void** values, CUlinkState* state) {
  return fake::link_create(count, options, values, state);
}

CUresult CUDAAPI cuLinkAddData_v2(CUlinkState state, CUjitInputType type, void* data, size_t size, const char* name,
                                  unsigned int count, CUjit_option* options, void** values) {
  return fake::link_add_data(state, type, data, size, name, count, options, values);
}
CUresult CUDAAPI cuLinkAddData(CUlinkState state, CUjitInputType type, void* data, size_t size, const char* name,
                               unsigned int count, CUjit_option* options, void** values) {
  return fake::link_add_data(state, type, data, size, name, count, options, values);
}

CUresult CUDAAPI cuLinkComplete(CUlinkState state, void** cubin, size_t* size) {
  return fake::link_complete(state, cubin, size);
}

CUresult CUDAAPI cuLinkDestroy(CUlinkState state) { return fake::link_destroy(state); }

CUresult CUDAAPI cuGetProcAddress_v2(const char* symbol, void** pfn, int cuda_version, cuuint64_t flags,
                                     CUdriverProcAddressQueryResult* status);
CUresult CUDAAPI cuGetProcAddress(const char* symbol, void** pfn, int cuda_version, cuuint64_t flags);

}  // extern "C"

namespace {

template <class Function>
void* address(Function* function) {
  return reinterpret_cast<void*>(function);
}

using V = fake::EntryPointVersion;

// The versions are those of cudaTypedefs.h (PFN_<name>_v<version>).
const std::array k_init = {V{2000, address(&cuInit)}};
const std::array k_driver_get_version = {V{2020, address(&cuDriverGetVersion)}};
const std::array k_get_error_name = {V{6000, address(&cuGetErrorName)}};
const std::array k_get_error_string = {V{6000, address(&cuGetErrorString)}};
const std::array k_device_get = {V{2000, address(&cuDeviceGet)}};
const std::array k_device_get_count = {V{2000, address(&cuDeviceGetCount)}};
const std::array k_device_get_attribute = {V{2000, address(&cuDeviceGetAttribute)}};
const std::array k_ctx_get_current = {V{4000, address(&cuCtxGetCurrent)}};
const std::array k_ctx_get_device = {V{2000, address(&cuCtxGetDevice)}, V{13000, address(&cuCtxGetDevice_v2)}};
const std::array k_module_load_data = {V{2000, address(&cuModuleLoadData)}};
const std::array k_module_load_data_ex = {V{2010, address(&cuModuleLoadDataEx)}};
const std::array k_module_unload = {V{2000, address(&cuModuleUnload)}};
const std::array k_module_get_function = {V{2000, address(&cuModuleGetFunction)}};
const std::array k_link_create = {V{5050, address(&cuLinkCreate)}, V{6050, address(&cuLinkCreate_v2)}};
const std::array k_link_add_data = {V{5050, address(&cuLinkAddData)}, V{6050, address(&cuLinkAddData_v2)}};
const std::array k_link_complete = {V{5050, address(&cuLinkComplete)}};
const std::array k_link_destroy = {V{5050, address(&cuLinkDestroy)}};
const std::array k_get_proc_address = {V{11030, address(&cuGetProcAddress)}, V{12000, address(&cuGetProcAddress_v2)}};

const std::array<fake::EntryPoint, 18> k_entry_points = {{
    {"cuInit", k_init},
    {"cuDriverGetVersion", k_driver_get_version},
    {"cuGetErrorName", k_get_error_name},
    {"cuGetErrorString", k_get_error_string},
    {"cuDeviceGet", k_device_get},
    {"cuDeviceGetCount", k_device_get_count},
    {"cuDeviceGetAttribute", k_device_get_attribute},
    {"cuCtxGetCurrent", k_ctx_get_current},
    {"cuCtxGetDevice", k_ctx_get_device},
    {"cuModuleLoadData", k_module_load_data},
    {"cuModuleLoadDataEx", k_module_load_data_ex},
    {"cuModuleUnload", k_module_unload},
    {"cuModuleGetFunction", k_module_get_function},
    {"cuLinkCreate", k_link_create},
    {"cuLinkAddData", k_link_add_data},
    {"cuLinkComplete", k_link_complete},
    {"cuLinkDestroy", k_link_destroy},
    {"cuGetProcAddress", k_get_proc_address},
}};

CUresult get_proc_address(const char* symbol, void** pfn, int cuda_version, cuuint64_t flags,
                          CUdriverProcAddressQueryResult* status) {
  const fake::Settings settings = fake::FakeDriver::instance().settings.get();
  return fake::resolve_proc_address(k_entry_points, symbol, pfn, cuda_version, flags, status, settings.driver_version,
                                    settings.hidden_entry_points);
}

}  // namespace

extern "C" {

CUresult CUDAAPI cuGetProcAddress_v2(const char* symbol, void** pfn, int cuda_version, cuuint64_t flags,
                                     CUdriverProcAddressQueryResult* status) {
  return get_proc_address(symbol, pfn, cuda_version, flags, status);
}

CUresult CUDAAPI cuGetProcAddress(const char* symbol, void** pfn, int cuda_version, cuuint64_t flags) {
  return get_proc_address(symbol, pfn, cuda_version, flags, nullptr);
}

}  // extern "C"
