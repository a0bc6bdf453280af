// The cuLink* entry points under their plain and _v2 ABI names (link_api.hpp says what each does).
// Thread safety: every entry point may be called from any thread; one CUlinkState by one thread at a
// time, as with the driver.
#include <tests/fakes/fake_cuda/abi_declarations.hpp>
#include <tests/fakes/fake_cuda/link_api.hpp>

#include <cuda.h>

namespace fake = jitcache::fakes::fake_cuda;

extern "C" {

CUresult CUDAAPI cuLinkCreate_v2(unsigned int count, CUjit_option* options, void** values, CUlinkState* state) {
  return fake::link_create(count, options, values, state);
}
CUresult CUDAAPI cuLinkCreate(unsigned int count, CUjit_option* options, void** values, CUlinkState* state) {
  return fake::link_create(count, options, values, state);
}

CUresult CUDAAPI cuLinkAddData_v2(CUlinkState state, CUjitInputType type, void* data, size_t size, const char* name,
                                  unsigned int count, CUjit_option* options, void** values) {
  return fake::link_add_data(state, type, data, size, name, count, options, values);
}
CUresult CUDAAPI cuLinkAddData(CUlinkState state, CUjitInputType type, void* data, size_t size, const char* name,
                               unsigned int count, CUjit_option* options, void** values) {
  return fake::link_add_data(state, type, data, size, name, count, options, values);
}

CUresult CUDAAPI cuLinkAddFile_v2(CUlinkState state, CUjitInputType type, const char* path, unsigned int count,
                                  CUjit_option* options, void** values) {
  return fake::link_add_file(state, type, path, count, options, values);
}
CUresult CUDAAPI cuLinkAddFile(CUlinkState state, CUjitInputType type, const char* path, unsigned int count,
                               CUjit_option* options, void** values) {
  return fake::link_add_file(state, type, path, count, options, values);
}

CUresult CUDAAPI cuLinkComplete(CUlinkState state, void** cubin, size_t* size) {
  return fake::link_complete(state, cubin, size);
}

CUresult CUDAAPI cuLinkDestroy(CUlinkState state) { return fake::link_destroy(state); }

}  // extern "C"
