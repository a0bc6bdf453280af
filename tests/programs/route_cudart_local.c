/* A program that opens a library linking cudart with RTLD_LOCAL (how Python imports an extension)
 * and gets cuModuleLoadData through that library's cudaGetDriverEntryPoint, then loads PTX with it.
 * Usage: route_cudart_local LIBRARY IMAGE KERNEL */
#include <dlfcn.h>

#include <tests/programs/program_io.h>

typedef void* (*entry_point_t)(const char*);
typedef CUresult (*load_t)(CUmodule*, const void*);

int main(int argc, char** argv) {
  if (argc != 4) return 2;
  char* image = read_image(argv[2], NULL);
  if (image == NULL) return 3;
  void* user = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (user == NULL) {
    printf("dlopen: %s\n", dlerror());
    return 4;
  }
  entry_point_t entry_point = (entry_point_t)dlsym(user, "cudart_user_entry_point");
  if (entry_point == NULL) return 5;
  print_result("cuInit", cuInit(0));
  load_t load = (load_t)entry_point("cuModuleLoadData");
  printf("cudaGetDriverEntryPoint through a local cudart: %s\n", load != NULL ? "found" : "null");
  if (load == NULL) return 6;
  CUmodule module = NULL;
  print_result("cuModuleLoadData", load(&module, image));
  CUfunction function = NULL;
  print_result(argv[3], module != NULL ? cuModuleGetFunction(&function, module, argv[3]) : CUDA_ERROR_INVALID_HANDLE);
  free(image);
  return 0;
}
