/* (b) A program that, like cudart, takes only cuGetProcAddress_v2 from libcuda (dlopen + dlsym)
 * and resolves every other entry point through it, including cuGetProcAddress itself.
 * Usage: route_proc_address IMAGE KERNEL */
#include <dlfcn.h>

#include <tests/programs/program_io.h>

typedef CUresult (*get_proc_t)(const char*, void**, int, cuuint64_t, CUdriverProcAddressQueryResult*);
typedef CUresult (*init_t)(unsigned);
typedef CUresult (*load_t)(CUmodule*, const void*);
typedef CUresult (*get_function_t)(CUfunction*, CUmodule, const char*);
typedef CUresult (*unload_t)(CUmodule);

static void* resolve(get_proc_t get_proc, const char* name, int version, cuuint64_t flags) {
  void* pfn = NULL;
  CUdriverProcAddressQueryResult status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
  CUresult result = get_proc(name, &pfn, version, flags, &status);
  printf("resolve %s %d: %d %d %s\n", name, version, (int)result, (int)status, pfn != NULL ? "found" : "null");
  return pfn;
}

int main(int argc, char** argv) {
  if (argc != 3) return 2;
  char* image = read_image(argv[1], NULL);
  if (image == NULL) return 3;
  void* cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (cuda == NULL) return 4;
  get_proc_t first = (get_proc_t)dlsym(cuda, "cuGetProcAddress_v2");
  if (first == NULL) return 5;
  /* cudart asks the resolver for itself, then uses what it got. */
  get_proc_t get_proc = (get_proc_t)resolve(first, "cuGetProcAddress", 12000, CU_GET_PROC_ADDRESS_DEFAULT);
  if (get_proc == NULL) return 6;
  init_t init = (init_t)resolve(get_proc, "cuInit", 2000, CU_GET_PROC_ADDRESS_DEFAULT);
  load_t load = (load_t)resolve(get_proc, "cuModuleLoadData", 2000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM);
  get_function_t get_function = (get_function_t)resolve(get_proc, "cuModuleGetFunction", 2000, 0);
  unload_t unload = (unload_t)resolve(get_proc, "cuModuleUnload", 2000, 0);
  if (init == NULL || load == NULL || get_function == NULL || unload == NULL) return 7;
  print_result("cuInit", init(0));
  CUmodule module = NULL;
  print_result("cuModuleLoadData", load(&module, image));
  CUfunction function = NULL;
  print_result(argv[2], module != NULL ? get_function(&function, module, argv[2]) : CUDA_ERROR_INVALID_HANDLE);
  if (module != NULL) print_result("cuModuleUnload", unload(module));
  free(image);
  return 0;
}
