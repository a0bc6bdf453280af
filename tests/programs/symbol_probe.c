/* A program that never loads the driver, cudart or nvJitLink probes for their functions, as
 * libraries do to decide whether CUDA is there: every name must be missing, as it is without
 * libjitcache-preload.so, and the preload's core (and its libstdc++) must never be mapped.
 * Prints, for each name, what dlsym(RTLD_DEFAULT) and dlsym of the program's own handle found and
 * whether dlerror() then had an error; then which of those libraries are mapped (/proc/self/maps). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

static int mapped(const char* part) {
  FILE* maps = fopen("/proc/self/maps", "r");
  if (maps == NULL) return -1;
  char line[4096];
  int found = 0;
  while (fgets(line, sizeof line, maps) != NULL) found = found || strstr(line, part) != NULL;
  fclose(maps);
  return found;
}

int main(void) {
  static const char* const k_names[] = {
      "cuModuleLoadData", "cuModuleLoadDataEx",     "cuLibraryLoadData",        "cuLinkCreate_v2",
      "cuGetProcAddress", "cuGetProcAddress_v2",    "cudaGetDriverEntryPoint",  "cudaGetDriverEntryPointByVersion",
      "nvJitLinkCreate",  "__nvJitLinkCreate_13_0", "__nvJitLinkComplete_12_4", "cuInit",
  };
  void* program = dlopen(NULL, RTLD_NOW);
  for (size_t i = 0; i < sizeof k_names / sizeof k_names[0]; ++i) {
    (void)dlerror();
    const int by_default = dlsym(RTLD_DEFAULT, k_names[i]) != NULL;
    const int default_error = dlerror() != NULL;
    const int by_program = dlsym(program, k_names[i]) != NULL;
    const int program_error = dlerror() != NULL;
    printf("%s: default %s%s, program %s%s\n", k_names[i], by_default ? "found" : "missing",
           default_error ? " (error)" : "", by_program ? "found" : "missing", program_error ? " (error)" : "");
  }
  printf("libstdc++ mapped: %s\n", mapped("libstdc++") ? "yes" : "no");
  printf("preload core mapped: %s\n", mapped("libjitcache-preload-core") ? "yes" : "no");
  return 0;
}
