/* (a) A driver-API program linked to libcuda that loads PTX with cuModuleLoadDataEx (direct
 * binding), with an info log and an optimisation level, then finds its kernel.
 * Usage: route_direct IMAGE KERNEL */
#include <tests/programs/program_io.h>

int main(int argc, char** argv) {
  if (argc != 3) return 2;
  char* image = read_image(argv[1], NULL);
  if (image == NULL) return 3;
  print_result("cuInit", cuInit(0));
  char log[4096] = {0};
  CUjit_option options[] = {CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES, CU_JIT_OPTIMIZATION_LEVEL};
  void* values[] = {log, (void*)(size_t)sizeof(log), (void*)(size_t)3};
  CUmodule module = NULL;
  print_result("cuModuleLoadDataEx", cuModuleLoadDataEx(&module, image, 3, options, values));
  CUfunction function = NULL;
  print_result(argv[2], module != NULL ? cuModuleGetFunction(&function, module, argv[2]) : CUDA_ERROR_INVALID_HANDLE);
  if (module != NULL) print_result("cuModuleUnload", cuModuleUnload(module));
  free(image);
  return 0;
}
