/* (f) A program that links two PTX modules with nvJitLink, one calling an extern .func the other
 * defines. How it reaches nvJitLink:
 *   data   linked to the toolkit's libnvJitLink (nvJitLink.h binds the versioned names, e.g.
 *          __nvJitLinkCreate_13_0), both inputs by nvJitLinkAddData
 *   file   the same, the second input by nvJitLinkAddFile
 *   dlsym  dlopen("libnvJitLink.so.<major>") + dlsym of the unversioned names, as cuda-python does
 * It prints each result, the image's size and a fingerprint of its bytes, never a log.
 * Usage: link_nvjitlink CALLER.ptx CALLEE.ptx ARCH data|file|dlsym */
#include <dlfcn.h>
#include <nvJitLink.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tests/programs/program_hash.h>
#include <tests/programs/program_io.h>

typedef nvJitLinkResult (*create_t)(nvJitLinkHandle*, uint32_t, const char**);
typedef nvJitLinkResult (*add_data_t)(nvJitLinkHandle, nvJitLinkInputType, const void*, size_t, const char*);
typedef nvJitLinkResult (*complete_t)(nvJitLinkHandle);
typedef nvJitLinkResult (*size_t_query_t)(nvJitLinkHandle, size_t*);
typedef nvJitLinkResult (*cubin_t)(nvJitLinkHandle, void*);
typedef nvJitLinkResult (*destroy_t)(nvJitLinkHandle*);

struct Link {
  create_t create;
  add_data_t add_data;
  complete_t complete;
  size_t_query_t cubin_size;
  cubin_t cubin;
  size_t_query_t error_log_size;
  destroy_t destroy;
};

static int through_dlsym(struct Link* link) {
  char name[64];
  snprintf(name, sizeof(name), "libnvJitLink.so.%d", CUDA_VERSION / 1000);
  void* library = dlopen(name, RTLD_NOW | RTLD_LOCAL);
  if (library == NULL) return 0;
  link->create = (create_t)dlsym(library, "nvJitLinkCreate");
  link->add_data = (add_data_t)dlsym(library, "nvJitLinkAddData");
  link->complete = (complete_t)dlsym(library, "nvJitLinkComplete");
  link->cubin_size = (size_t_query_t)dlsym(library, "nvJitLinkGetLinkedCubinSize");
  link->cubin = (cubin_t)dlsym(library, "nvJitLinkGetLinkedCubin");
  link->error_log_size = (size_t_query_t)dlsym(library, "nvJitLinkGetErrorLogSize");
  link->destroy = (destroy_t)dlsym(library, "nvJitLinkDestroy");
  return link->create && link->add_data && link->complete && link->cubin_size && link->cubin && link->error_log_size &&
         link->destroy;
}

static void print_link(const char* what, nvJitLinkResult result) { printf("%s: %d\n", what, (int)result); }

int main(int argc, char** argv) {
  if (argc != 5) return 2;
  const char* mode = argv[4];
  size_t caller_size = 0;
  size_t callee_size = 0;
  char* caller = read_image(argv[1], &caller_size);
  char* callee = read_image(argv[2], &callee_size);
  if (caller == NULL || callee == NULL) return 3;
  struct Link link = {nvJitLinkCreate,         nvJitLinkAddData,         nvJitLinkComplete, nvJitLinkGetLinkedCubinSize,
                      nvJitLinkGetLinkedCubin, nvJitLinkGetErrorLogSize, nvJitLinkDestroy};
  if (strcmp(mode, "dlsym") == 0 && !through_dlsym(&link)) return 4;

  char arch[64];
  snprintf(arch, sizeof(arch), "-arch=%s", argv[3]);
  const char* options[] = {arch, "-O3", "-time"};
  nvJitLinkHandle handle = NULL;
  print_link("nvJitLinkCreate", link.create(&handle, 3, options));
  if (handle == NULL) return 5;
  print_link("nvJitLinkAddData caller", link.add_data(handle, NVJITLINK_INPUT_PTX, caller, caller_size + 1, "caller"));
  if (strcmp(mode, "file") == 0) {
    print_link("nvJitLinkAddFile callee", nvJitLinkAddFile(handle, NVJITLINK_INPUT_PTX, argv[2]));
  } else {
    print_link("nvJitLinkAddData callee", link.add_data(handle, NVJITLINK_INPUT_PTX, callee, callee_size, "callee"));
  }
  nvJitLinkResult completed = link.complete(handle);
  print_link("nvJitLinkComplete", completed);
  size_t errors = 1;
  print_link("nvJitLinkGetErrorLogSize", link.error_log_size(handle, &errors));
  printf("error log: %zu bytes\n", errors);
  if (completed == NVJITLINK_SUCCESS) {
    size_t size = 0;
    print_link("nvJitLinkGetLinkedCubinSize", link.cubin_size(handle, &size));
    void* cubin = malloc(size);
    print_link("nvJitLinkGetLinkedCubin", link.cubin(handle, cubin));
    printf("image: %zu bytes, fingerprint %016llx\n", size, (unsigned long long)image_fingerprint(cubin, size));
    free(cubin);
  }
  print_link("nvJitLinkDestroy", link.destroy(&handle));
  printf("handle after destroy: %s\n", handle == NULL ? "null" : "set");
  free(caller);
  free(callee);
  return 0;
}
