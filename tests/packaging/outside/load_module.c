/* Loads a PTX file through libjitcache and the daemon at $JITCACHE_SOCKET, the way a user's program
 * would, and prints what happened and the process's published-image counters. Built against the
 * installed package (check_debian_package.sh, outside/CMakeLists.txt) and against the build tree for
 * the sidecar test (check_sidecar_namespaces.sh). Exit 0 only for a loaded module. */
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
  jitcache_counters counters = {.struct_size = sizeof counters};
  jitcache_get_counters(&counters);
  printf("result %d outcome %s published_hits %llu published_rejects %llu reason %s\n", (int)result,
         jitcache_outcome_name(info.outcome), (unsigned long long)counters.published_hits,
         (unsigned long long)counters.published_rejects, info.reason);
  if (result != CUDA_SUCCESS) return 1;
  jitcache_module_unload(module);
  return 0;
}
