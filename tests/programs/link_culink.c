/* (d) A driver-API program that links two PTX modules with cuLink*, one calling an extern .func the
 * other defines, then loads the linked cubin and finds its kernel. How it reaches cuLink*:
 *   direct  linked to libcuda (cuLinkCreate and friends bind to the _v2 names through cuda.h)
 *   proc    dlopen + dlsym("cuGetProcAddress_v2"), then cuGetProcAddress for each cuLink* call
 *   file    direct, with the second input added by cuLinkAddFile
 * It prints each result, the image's size and a fingerprint of its bytes, never a log (a cached
 * run writes another info log than a cold one).
 * Usage: link_culink CALLER.ptx CALLEE.ptx KERNEL direct|proc|file */
#include <dlfcn.h>
#include <string.h>

#include <tests/programs/program_hash.h>
#include <tests/programs/program_io.h>

typedef CUresult (*get_proc_t)(const char*, void**, int, cuuint64_t, CUdriverProcAddressQueryResult*);
typedef CUresult (*create_t)(unsigned, CUjit_option*, void**, CUlinkState*);
typedef CUresult (*add_data_t)(CUlinkState, CUjitInputType, void*, size_t, const char*, unsigned, CUjit_option*,
                               void**);
typedef CUresult (*complete_t)(CUlinkState, void**, size_t*);
typedef CUresult (*destroy_t)(CUlinkState);

struct Link {
  create_t create;
  add_data_t add_data;
  complete_t complete;
  destroy_t destroy;
};

static int through_proc_address(struct Link* link) {
  void* cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (cuda == NULL) return 0;
  get_proc_t get_proc = (get_proc_t)dlsym(cuda, "cuGetProcAddress_v2");
  if (get_proc == NULL) return 0;
  CUdriverProcAddressQueryResult status;
  get_proc("cuLinkCreate", (void**)&link->create, 12000, CU_GET_PROC_ADDRESS_DEFAULT, &status);
  get_proc("cuLinkAddData", (void**)&link->add_data, 12000, CU_GET_PROC_ADDRESS_DEFAULT, &status);
  get_proc("cuLinkComplete", (void**)&link->complete, 12000, CU_GET_PROC_ADDRESS_DEFAULT, &status);
  get_proc("cuLinkDestroy", (void**)&link->destroy, 12000, CU_GET_PROC_ADDRESS_DEFAULT, &status);
  return link->create != NULL && link->add_data != NULL && link->complete != NULL && link->destroy != NULL;
}

int main(int argc, char** argv) {
  if (argc != 5) return 2;
  const char* mode = argv[4];
  size_t caller_size = 0;
  size_t callee_size = 0;
  char* caller = read_image(argv[1], &caller_size);
  char* callee = read_image(argv[2], &callee_size);
  if (caller == NULL || callee == NULL) return 3;
  struct Link link = {cuLinkCreate, cuLinkAddData, cuLinkComplete, cuLinkDestroy};
  if (strcmp(mode, "proc") == 0 && !through_proc_address(&link)) return 4;
  print_result("cuInit", cuInit(0));

  char info[4096] = {0};
  char error[4096] = {0};
  float wall = 0;
  CUjit_option options[] = {CU_JIT_INFO_LOG_BUFFER,  CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES,
                            CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
                            CU_JIT_WALL_TIME,        CU_JIT_OPTIMIZATION_LEVEL};
  void* values[] = {info, (void*)sizeof(info), error, (void*)sizeof(error), NULL, (void*)(size_t)3};
  CUlinkState state = NULL;
  print_result("cuLinkCreate", link.create(6, options, values, &state));
  if (state == NULL) return 5;
  print_result("cuLinkAddData caller",
               link.add_data(state, CU_JIT_INPUT_PTX, caller, caller_size + 1, "link_caller.ptx", 0, NULL, NULL));
  if (strcmp(mode, "file") == 0) {
    print_result("cuLinkAddFile callee", cuLinkAddFile(state, CU_JIT_INPUT_PTX, argv[2], 0, NULL, NULL));
  } else {
    CUjit_option input_options[] = {CU_JIT_GENERATE_LINE_INFO};
    void* input_values[] = {(void*)(size_t)1};
    print_result("cuLinkAddData callee", link.add_data(state, CU_JIT_INPUT_PTX, callee, callee_size + 1,
                                                       "link_callee.ptx", 1, input_options, input_values));
  }
  void* cubin = NULL;
  size_t size = 0;
  CUresult completed = link.complete(state, &cubin, &size);
  print_result("cuLinkComplete", completed);
  if (completed == CUDA_SUCCESS) {
    printf("image: %zu bytes, fingerprint %016llx\n", size, (unsigned long long)image_fingerprint(cubin, size));
    CUmodule module = NULL;
    print_result("cuModuleLoadData", cuModuleLoadData(&module, cubin));
    CUfunction function = NULL;
    print_result(argv[3], module != NULL ? cuModuleGetFunction(&function, module, argv[3]) : CUDA_ERROR_INVALID_HANDLE);
    if (module != NULL) print_result("cuModuleUnload", cuModuleUnload(module));
  }
  print_result("cuLinkDestroy", link.destroy(state));
  free(caller);
  free(callee);
  return 0;
}
