/* Loads the PTX file named by argv[1] through libjitcache and prints the outcome: proof that the
 * installed header, library and package files work from plain C. Exit 0 when the load succeeded. */
#include <jitcache/jitcache.h>
#include <stdio.h>

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  CUmodule module = NULL;
  CUresult result = jitcache_module_load(&module, argv[1]);
  jitcache_load_info info = {0};
  info.struct_size = sizeof info;
  jitcache_last_load_info(&info);
  printf("%s %d %s\n", jitcache_outcome_name(info.outcome), (int)result, info.reason);
  if (result == CUDA_SUCCESS) jitcache_module_unload(module);
  return result == CUDA_SUCCESS ? 0 : 1;
}
