/* A program using dynamic cudart's driver entry points: cudaGetDriverEntryPoint and
 * cudaGetDriverEntryPointByVersion give it cuModuleLoadData and cuModuleLoadDataEx, which load PTX.
 * Linked to the fake cudart in CI (tests/fakes/fake_cudart).
 * Usage: route_cudart_entry IMAGE KERNEL */
#include <cuda_runtime_api.h>

#include <tests/programs/program_io.h>

typedef CUresult (*load_t)(CUmodule*, const void*);
typedef CUresult (*load_ex_t)(CUmodule*, const void*, unsigned, CUjit_option*, void**);

int main(int argc, char** argv) {
  if (argc != 3) return 2;
  char* image = read_image(argv[1], NULL);
  if (image == NULL) return 3;
  void* load = NULL;
  enum cudaDriverEntryPointQueryResult status = cudaDriverEntryPointSymbolNotFound;
  printf("cudaGetDriverEntryPoint: %d\n",
         (int)cudaGetDriverEntryPoint("cuModuleLoadData", &load, cudaEnableDefault, &status));
  void* load_ex = NULL;
  printf("cudaGetDriverEntryPointByVersion: %d\n",
         (int)cudaGetDriverEntryPointByVersion("cuModuleLoadDataEx", &load_ex, 12000, cudaEnableDefault, &status));
  if (load == NULL || load_ex == NULL) return 4;
  CUmodule module = NULL;
  print_result("cuModuleLoadData", ((load_t)load)(&module, image));
  CUfunction function = NULL;
  print_result(argv[2], module != NULL ? cuModuleGetFunction(&function, module, argv[2]) : CUDA_ERROR_INVALID_HANDLE);
  CUmodule second = NULL;
  CUjit_option options[] = {CU_JIT_OPTIMIZATION_LEVEL};
  void* values[] = {(void*)(size_t)2};
  print_result("cuModuleLoadDataEx O2", ((load_ex_t)load_ex)(&second, image, 1, options, values));
  free(image);
  return 0;
}
