// The C++ side of the package check: jitcache::Module owns what jitcache::load_file loads.
#include <jitcache/jitcache.hpp>

#include <cstdio>

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  jitcache::Module module;
  CUresult result = jitcache::load_file(module, argv[1]);
  std::printf("%s %d\n", jitcache_outcome_name(jitcache::last_load_info().outcome), static_cast<int>(result));
  return result == CUDA_SUCCESS && module ? 0 : 1;
}
