// The cuLibrary* and cuKernelGetFunction entry points under their ABI names (library_api.hpp and
// library_registry.hpp say what each does). Thread safety: every entry point may be called from any
// thread.
#include <tests/fakes/fake_cuda/abi_declarations.hpp>
#include <tests/fakes/fake_cuda/fake_driver.hpp>
#include <tests/fakes/fake_cuda/library_api.hpp>

#include <cuda.h>

namespace fake = jitcache::fakes::fake_cuda;

extern "C" {

CUresult CUDAAPI cuLibraryLoadData(CUlibrary* library, const void* code, CUjit_option* jit_options, void** jit_values,
                                   unsigned int jit_count, CUlibraryOption* library_options, void** library_values,
                                   unsigned int library_count) {
  return fake::library_load_data(library, code, jit_options, jit_values, jit_count, library_options, library_values,
                                 library_count);
}

CUresult CUDAAPI cuLibraryLoadFromFile(CUlibrary* library, const char* path, CUjit_option* jit_options,
                                       void** jit_values, unsigned int jit_count, CUlibraryOption* library_options,
                                       void** library_values, unsigned int library_count) {
  return fake::library_load_from_file(library, path, jit_options, jit_values, jit_count, library_options,
                                      library_values, library_count);
}

CUresult CUDAAPI cuLibraryUnload(CUlibrary library) { return fake::library_unload(library); }

CUresult CUDAAPI cuLibraryGetKernel(CUkernel* kernel, CUlibrary library, const char* name) {
  return fake::FakeDriver::instance().libraries.get_kernel(library, name, kernel);
}

CUresult CUDAAPI cuLibraryGetKernelCount(unsigned int* count, CUlibrary library) {
  return fake::FakeDriver::instance().libraries.kernel_count(library, count);
}

CUresult CUDAAPI cuLibraryEnumerateKernels(CUkernel* kernels, unsigned int capacity, CUlibrary library) {
  return fake::FakeDriver::instance().libraries.enumerate_kernels(library, kernels, capacity);
}

CUresult CUDAAPI cuLibraryGetModule(CUmodule* module, CUlibrary library) {
  return fake::FakeDriver::instance().libraries.get_module(library, module);
}

CUresult CUDAAPI cuKernelGetFunction(CUfunction* function, CUkernel kernel) {
  return fake::FakeDriver::instance().libraries.kernel_function(kernel, function);
}

}  // extern "C"
