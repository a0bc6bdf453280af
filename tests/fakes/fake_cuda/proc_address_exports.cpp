// cuGetProcAddress{,_v2} and the table they resolve from: every entry point the fake exports, by base
// name, with the CUDA version that introduced each ABI (cudaTypedefs.h, PFN_<name>_v<version>;
// docs/driver-facts.md §1, §5). Every address here is also exported under its ABI name.
// Thread safety: the table is constant; cuGetProcAddress may be called from any thread.
#include <tests/fakes/fake_cuda/abi_declarations.hpp>
#include <tests/fakes/fake_cuda/fake_driver.hpp>
#include <tests/fakes/fake_cuda/proc_address.hpp>

#include <cuda.h>

#include <array>

namespace fake = jitcache::fakes::fake_cuda;

namespace {

template <class Function>
void* address(Function* function) {
  return reinterpret_cast<void*>(function);
}

using V = fake::EntryPointVersion;

const std::array k_init = {V{2000, address(&cuInit)}};
const std::array k_driver_get_version = {V{2020, address(&cuDriverGetVersion)}};
const std::array k_get_error_name = {V{6000, address(&cuGetErrorName)}};
const std::array k_get_error_string = {V{6000, address(&cuGetErrorString)}};
const std::array k_device_get = {V{2000, address(&cuDeviceGet)}};
const std::array k_device_get_count = {V{2000, address(&cuDeviceGetCount)}};
const std::array k_device_get_attribute = {V{2000, address(&cuDeviceGetAttribute)}};
const std::array k_ctx_get_current = {V{4000, address(&cuCtxGetCurrent)}};
const std::array k_ctx_get_device = {V{2000, address(&cuCtxGetDevice)}, V{13000, address(&cuCtxGetDevice_v2)}};
const std::array k_module_load = {V{2000, address(&cuModuleLoad)}};
const std::array k_module_load_data = {V{2000, address(&cuModuleLoadData)}};
const std::array k_module_load_data_ex = {V{2010, address(&cuModuleLoadDataEx)}};
const std::array k_module_load_fat_binary = {V{2000, address(&cuModuleLoadFatBinary)}};
const std::array k_module_unload = {V{2000, address(&cuModuleUnload)}};
const std::array k_module_get_function = {V{2000, address(&cuModuleGetFunction)}};
const std::array k_module_get_loading_mode = {V{11070, address(&cuModuleGetLoadingMode)}};
const std::array k_library_load_data = {V{12000, address(&cuLibraryLoadData)}};
const std::array k_library_load_from_file = {V{12000, address(&cuLibraryLoadFromFile)}};
const std::array k_library_unload = {V{12000, address(&cuLibraryUnload)}};
const std::array k_library_get_kernel = {V{12000, address(&cuLibraryGetKernel)}};
const std::array k_library_get_kernel_count = {V{12040, address(&cuLibraryGetKernelCount)}};
const std::array k_library_enumerate_kernels = {V{12040, address(&cuLibraryEnumerateKernels)}};
const std::array k_library_get_module = {V{12000, address(&cuLibraryGetModule)}};
const std::array k_kernel_get_function = {V{12000, address(&cuKernelGetFunction)}};
const std::array k_link_create = {V{5050, address(&cuLinkCreate)}, V{6050, address(&cuLinkCreate_v2)}};
const std::array k_link_add_data = {V{5050, address(&cuLinkAddData)}, V{6050, address(&cuLinkAddData_v2)}};
const std::array k_link_add_file = {V{5050, address(&cuLinkAddFile)}, V{6050, address(&cuLinkAddFile_v2)}};
const std::array k_link_complete = {V{5050, address(&cuLinkComplete)}};
const std::array k_link_destroy = {V{5050, address(&cuLinkDestroy)}};
const std::array k_launch_kernel = {V{4000, address(&cuLaunchKernel)}, V{7000, address(&cuLaunchKernel_ptsz), true}};
const std::array k_get_export_table = {V{3000, address(&cuGetExportTable)}};
const std::array k_get_proc_address = {V{11030, address(&cuGetProcAddress)}, V{12000, address(&cuGetProcAddress_v2)}};

const std::array<fake::EntryPoint, 32> k_entry_points = {{
    {"cuInit", k_init},
    {"cuDriverGetVersion", k_driver_get_version},
    {"cuGetErrorName", k_get_error_name},
    {"cuGetErrorString", k_get_error_string},
    {"cuDeviceGet", k_device_get},
    {"cuDeviceGetCount", k_device_get_count},
    {"cuDeviceGetAttribute", k_device_get_attribute},
    {"cuCtxGetCurrent", k_ctx_get_current},
    {"cuCtxGetDevice", k_ctx_get_device},
    {"cuModuleLoad", k_module_load},
    {"cuModuleLoadData", k_module_load_data},
    {"cuModuleLoadDataEx", k_module_load_data_ex},
    {"cuModuleLoadFatBinary", k_module_load_fat_binary},
    {"cuModuleUnload", k_module_unload},
    {"cuModuleGetFunction", k_module_get_function},
    {"cuModuleGetLoadingMode", k_module_get_loading_mode},
    {"cuLibraryLoadData", k_library_load_data},
    {"cuLibraryLoadFromFile", k_library_load_from_file},
    {"cuLibraryUnload", k_library_unload},
    {"cuLibraryGetKernel", k_library_get_kernel},
    {"cuLibraryGetKernelCount", k_library_get_kernel_count},
    {"cuLibraryEnumerateKernels", k_library_enumerate_kernels},
    {"cuLibraryGetModule", k_library_get_module},
    {"cuKernelGetFunction", k_kernel_get_function},
    {"cuLinkCreate", k_link_create},
    {"cuLinkAddData", k_link_add_data},
    {"cuLinkAddFile", k_link_add_file},
    {"cuLinkComplete", k_link_complete},
    {"cuLinkDestroy", k_link_destroy},
    {"cuLaunchKernel", k_launch_kernel},
    {"cuGetExportTable", k_get_export_table},
    {"cuGetProcAddress", k_get_proc_address},
}};

CUresult get_proc_address(const char* symbol, void** pfn, int cuda_version, cuuint64_t flags,
                          CUdriverProcAddressQueryResult* status) {
  fake::FakeDriver& driver = fake::FakeDriver::instance();
  driver.counters.get_proc_address_calls.fetch_add(1);
  const fake::Settings settings = driver.settings.get();
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
