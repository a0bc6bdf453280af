/* A program beside another interposer (neighbour_interposer.c): five dlsym lookups ("dlsym"), or
 * five cuModuleLoadData of a cubin by direct binding ("load CUBIN"), then what the interposer
 * counted, so that a run with libjitcache-preload.so before or after the interposer can be
 * compared with a run without it.
 * Usage: neighbour_calls dlsym | neighbour_calls load CUBIN */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <string.h>

#include <tests/programs/program_io.h>

typedef void (*counts_fn)(int*, int*);

int main(int argc, char** argv) {
  if (argc >= 2 && strcmp(argv[1], "dlsym") == 0) {
    for (int i = 1; i <= 5; ++i) {
      char name[64];
      snprintf(name, sizeof name, "neighbour_probe_%d", i);
      printf("%s: %s\n", name, dlsym(RTLD_DEFAULT, name) != NULL ? "found" : "not found");
    }
  } else if (argc == 3 && strcmp(argv[1], "load") == 0) {
    char* cubin = read_image(argv[2], NULL);
    if (cubin == NULL) return 3;
    print_result("cuInit", cuInit(0));
    for (int i = 0; i < 5; ++i) {
      CUmodule module = NULL;
      print_result("cuModuleLoadData", cuModuleLoadData(&module, cubin));
      if (module != NULL) cuModuleUnload(module);
    }
    free(cubin);
  } else {
    return 2;
  }
  counts_fn counts = (counts_fn)dlsym(RTLD_DEFAULT, "neighbour_interposer_counts");
  if (counts == NULL) {
    printf("no interposer\n");
    return 0;
  }
  int dlsym_calls = 0;
  int load_calls = 0;
  counts(&dlsym_calls, &load_calls);
  printf("interposer saw dlsym %d of 5, cuModuleLoadData %d of 5\n", dlsym_calls, load_calls);
  return 0;
}
