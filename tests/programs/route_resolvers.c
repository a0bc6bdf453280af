/* The resolvers' contracts, under whatever dlsym is in front: cuGetProcAddress asked at the 11.3
 * version for "cuGetProcAddress" itself hands out the four-argument form, which resolves and loads;
 * dlsym(RTLD_NEXT) from a library finds the next library's definition, not its own; dlvsym of a
 * versioned libc name still finds it.
 * Usage: route_resolvers IMAGE KERNEL */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <string.h>

#include <tests/programs/program_io.h>

typedef CUresult (*get_proc_v2_t)(const char*, void**, int, cuuint64_t, CUdriverProcAddressQueryResult*);
typedef CUresult (*get_proc_v1_t)(const char*, void**, int, cuuint64_t);
typedef CUresult (*load_t)(CUmodule*, const void*);

const char* next_probe_name(void);
int next_probe_b_linked(void);

int main(int argc, char** argv) {
  if (argc != 3) return 2;
  char* image = read_image(argv[1], NULL);
  if (image == NULL) return 3;
  print_result("cuInit", cuInit(0));
  void* v1 = NULL;
  CUdriverProcAddressQueryResult status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
  print_result("cuGetProcAddress_v2(cuGetProcAddress, 11030)",
               cuGetProcAddress_v2("cuGetProcAddress", &v1, 11030, CU_GET_PROC_ADDRESS_DEFAULT, &status));
  if (v1 == NULL) return 4;
  void* load = NULL;
  print_result("cuGetProcAddress(cuModuleLoadData, 2000)",
               ((get_proc_v1_t)v1)("cuModuleLoadData", &load, 2000, CU_GET_PROC_ADDRESS_LEGACY_STREAM));
  if (load == NULL) return 5;
  CUmodule module = NULL;
  print_result("cuModuleLoadData", ((load_t)load)(&module, image));
  CUfunction function = NULL;
  print_result(argv[2], module != NULL ? cuModuleGetFunction(&function, module, argv[2]) : CUDA_ERROR_INVALID_HANDLE);
  /* A symbol the driver does not have: the resolver's own answer, untouched. */
  void* none = NULL;
  status = CU_GET_PROC_ADDRESS_SUCCESS;
  CUresult missing = cuGetProcAddress_v2("cuNoSuchFunction", &none, 13000, 0, &status);
  printf("cuNoSuchFunction: %d %d %s\n", (int)missing, (int)status, none == NULL ? "null" : "found");
  printf("next probe_name after a: %s (b linked: %d)\n", next_probe_name(), next_probe_b_linked());
  void* versioned = dlvsym(RTLD_DEFAULT, "fopen", "GLIBC_2.2.5");
  printf("dlvsym fopen@GLIBC_2.2.5: %s\n", versioned != NULL ? "found" : "null");
  free(image);
  return 0;
}
