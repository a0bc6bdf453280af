/* Loads a PTX file through the installed libjitcache and the daemon at $JITCACHE_SOCKET, the way a
 * user's program would, and prints what happened. Exit 0 only for a loaded module. */
#include <jitcache/jitcache.h>
#include <stdio.h>

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s PTX_FILE\n", argv[0]);
    return 2;
  }
  CUmodule module = NULL;
  CUresult result = jitcache_module_load(&module, argv[1]);
  jitcache_load_info info = {.struct_size = sizeof info};
  jitcache_last_load_info(&info);
  printf("result %d outcome %s reason %s\n", (int)result, jitcache_outcome_name(info.outcome), info.reason);
  if (result != CUDA_SUCCESS) return 1;
  jitcache_module_unload(module);
  return 0;
}
