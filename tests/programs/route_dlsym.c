/* (c) A program that opens the driver itself and looks its functions up by name, as PyTorch does
 * (dlopen("libcuda.so.1") + dlsym of the _v2-free names).
 * Usage: route_dlsym IMAGE KERNEL */
#include <dlfcn.h>

#include <tests/programs/program_io.h>

typedef CUresult (*init_t)(unsigned);
typedef CUresult (*load_ex_t)(CUmodule*, const void*, unsigned, CUjit_option*, void**);
typedef CUresult (*get_function_t)(CUfunction*, CUmodule, const char*);

int main(int argc, char** argv) {
  if (argc != 3) return 2;
  char* image = read_image(argv[1], NULL);
  if (image == NULL) return 3;
  void* cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (cuda == NULL) return 4;
  init_t init = (init_t)dlsym(cuda, "cuInit");
  /* The idiom for symbols whose value may be NULL: clear dlerror(), look up, ask dlerror(). */
  (void)dlerror();
  load_ex_t load = (load_ex_t)dlsym(cuda, "cuModuleLoadDataEx");
  const char* lookup_error = dlerror();
  printf("dlerror after finding cuModuleLoadDataEx: %s\n", lookup_error != NULL ? lookup_error : "none");
  get_function_t get_function = (get_function_t)dlsym(cuda, "cuModuleGetFunction");
  if (init == NULL || load == NULL || get_function == NULL) return 5;
  print_result("cuInit", init(0));
  CUmodule module = NULL;
  print_result("cuModuleLoadDataEx", load(&module, image, 0, NULL, NULL));
  CUfunction function = NULL;
  print_result(argv[2], module != NULL ? get_function(&function, module, argv[2]) : CUDA_ERROR_INVALID_HANDLE);
  free(image);
  return 0;
}
