/* A shared library that links cudart, as a Python extension does, for route_cudart_local: opened
 * with RTLD_LOCAL, its cudart is in its local scope only, while libjitcache-preload.so's
 * cudaGetDriverEntryPoint comes first in the global one. */
#include <cuda_runtime_api.h>

void* cudart_user_entry_point(const char* symbol) {
  void* pfn = 0;
  enum cudaDriverEntryPointQueryResult status = cudaDriverEntryPointSymbolNotFound;
  if (cudaGetDriverEntryPoint(symbol, &pfn, cudaEnableDefault, &status) != cudaSuccess) return 0;
  return status == cudaDriverEntryPointSuccess ? pfn : 0;
}
