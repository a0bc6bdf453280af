/* Every name libjitcache-preload.so exports besides dlsym and dlvsym, in one order that the shim
 * (this folder) and the core (client/src/preload/) share: the index of a name in this list is how
 * the shim asks the core for its function (shim_interface.h). C and C++ alike read it.
 *
 * X(name, kind): kind says what the name answers when the core cannot (JITCACHE_KIND_CUDA: the
 * driver's CUresult; NVJITLINK: an nvJitLinkResult; NVRTC: an nvrtcResult; CUDART: a cudaError_t;
 * API_*: libjitcache's C API, <jitcache/jitcache.h>) and where its real function lives.
 *
 * Rationale: one list, so that a name the core hooks cannot be missing from the shim's exports or
 * sit at another index; core_entries.cpp checks at attach time that every name has a function. */
#ifndef JITCACHE_PRELOAD_SHIM_HOOKED_NAMES_H
#define JITCACHE_PRELOAD_SHIM_HOOKED_NAMES_H

enum jitcache_hook_kind {
  JITCACHE_KIND_CUDA = 0,
  JITCACHE_KIND_NVJITLINK = 1,
  JITCACHE_KIND_CUDART = 2,
  JITCACHE_KIND_API_CURESULT = 3, /* returns CUresult: the fallback answers CUDA_ERROR_NOT_INITIALIZED */
  JITCACHE_KIND_API_INT = 4,      /* returns int: the fallback answers -1 */
  JITCACHE_KIND_API_TEXT = 5,     /* returns const char*: the fallback answers "unknown" */
  JITCACHE_KIND_NVRTC = 6         /* an nvrtcResult: the fallback answers NVRTC_ERROR_INTERNAL_ERROR */
};

/* The 13 functions of one nvJitLink name family (client/src/preload/nvjitlink_hooks.cpp). */
/* One name per line: */
/* clang-format off */
#define JITCACHE_NVJITLINK_FAMILY_NAMES(X, P, S) \
  X(P##Create##S, JITCACHE_KIND_NVJITLINK) \
  X(P##Destroy##S, JITCACHE_KIND_NVJITLINK) \
  X(P##AddData##S, JITCACHE_KIND_NVJITLINK) \
  X(P##AddFile##S, JITCACHE_KIND_NVJITLINK) \
  X(P##Complete##S, JITCACHE_KIND_NVJITLINK) \
  X(P##GetLinkedCubinSize##S, JITCACHE_KIND_NVJITLINK) \
  X(P##GetLinkedCubin##S, JITCACHE_KIND_NVJITLINK) \
  X(P##GetLinkedPtxSize##S, JITCACHE_KIND_NVJITLINK) \
  X(P##GetLinkedPtx##S, JITCACHE_KIND_NVJITLINK) \
  X(P##GetErrorLogSize##S, JITCACHE_KIND_NVJITLINK) \
  X(P##GetErrorLog##S, JITCACHE_KIND_NVJITLINK) \
  X(P##GetInfoLogSize##S, JITCACHE_KIND_NVJITLINK) \
  X(P##GetInfoLog##S, JITCACHE_KIND_NVJITLINK)

#define JITCACHE_HOOKED_NAMES(X) \
  X(cuModuleLoad, JITCACHE_KIND_CUDA) \
  X(cuModuleLoadData, JITCACHE_KIND_CUDA) \
  X(cuModuleLoadDataEx, JITCACHE_KIND_CUDA) \
  X(cuModuleLoadFatBinary, JITCACHE_KIND_CUDA) \
  X(cuLibraryLoadData, JITCACHE_KIND_CUDA) \
  X(cuLibraryLoadFromFile, JITCACHE_KIND_CUDA) \
  X(cuLibraryUnload, JITCACHE_KIND_CUDA) \
  X(cuLinkCreate, JITCACHE_KIND_CUDA) \
  X(cuLinkCreate_v2, JITCACHE_KIND_CUDA) \
  X(cuLinkAddData, JITCACHE_KIND_CUDA) \
  X(cuLinkAddData_v2, JITCACHE_KIND_CUDA) \
  X(cuLinkAddFile, JITCACHE_KIND_CUDA) \
  X(cuLinkAddFile_v2, JITCACHE_KIND_CUDA) \
  X(cuLinkComplete, JITCACHE_KIND_CUDA) \
  X(cuLinkDestroy, JITCACHE_KIND_CUDA) \
  X(cuGetProcAddress, JITCACHE_KIND_CUDA) \
  X(cuGetProcAddress_v2, JITCACHE_KIND_CUDA) \
  X(cuGetProcAddress_v2_ptsz, JITCACHE_KIND_CUDA) \
  X(cudaGetDriverEntryPoint, JITCACHE_KIND_CUDART) \
  X(cudaGetDriverEntryPoint_ptsz, JITCACHE_KIND_CUDART) \
  X(cudaGetDriverEntryPointByVersion, JITCACHE_KIND_CUDART) \
  X(cudaGetDriverEntryPointByVersion_ptsz, JITCACHE_KIND_CUDART) \
  JITCACHE_NVJITLINK_FAMILY_NAMES(X, nvJitLink, ) \
  JITCACHE_NVJITLINK_FAMILY_NAMES(X, __nvJitLink, _12_0) \
  JITCACHE_NVJITLINK_FAMILY_NAMES(X, __nvJitLink, _12_1) \
  JITCACHE_NVJITLINK_FAMILY_NAMES(X, __nvJitLink, _12_2) \
  JITCACHE_NVJITLINK_FAMILY_NAMES(X, __nvJitLink, _12_3) \
  JITCACHE_NVJITLINK_FAMILY_NAMES(X, __nvJitLink, _12_4) \
  JITCACHE_NVJITLINK_FAMILY_NAMES(X, __nvJitLink, _12_5) \
  JITCACHE_NVJITLINK_FAMILY_NAMES(X, __nvJitLink, _12_6) \
  JITCACHE_NVJITLINK_FAMILY_NAMES(X, __nvJitLink, _12_8) \
  JITCACHE_NVJITLINK_FAMILY_NAMES(X, __nvJitLink, _12_9) \
  JITCACHE_NVJITLINK_FAMILY_NAMES(X, __nvJitLink, _13_0) \
  JITCACHE_NVJITLINK_FAMILY_NAMES(X, __nvJitLink, _13_1) \
  JITCACHE_NVJITLINK_FAMILY_NAMES(X, __nvJitLink, _13_2) \
  X(nvrtcCreateProgram, JITCACHE_KIND_NVRTC) \
  X(nvrtcDestroyProgram, JITCACHE_KIND_NVRTC) \
  X(nvrtcAddNameExpression, JITCACHE_KIND_NVRTC) \
  X(nvrtcCompileProgram, JITCACHE_KIND_NVRTC) \
  X(nvrtcGetLoweredName, JITCACHE_KIND_NVRTC) \
  X(nvrtcGetProgramLogSize, JITCACHE_KIND_NVRTC) \
  X(nvrtcGetProgramLog, JITCACHE_KIND_NVRTC) \
  X(nvrtcGetPTXSize, JITCACHE_KIND_NVRTC) \
  X(nvrtcGetPTX, JITCACHE_KIND_NVRTC) \
  X(nvrtcGetCUBINSize, JITCACHE_KIND_NVRTC) \
  X(nvrtcGetCUBIN, JITCACHE_KIND_NVRTC) \
  X(nvrtcGetLTOIRSize, JITCACHE_KIND_NVRTC) \
  X(nvrtcGetLTOIR, JITCACHE_KIND_NVRTC) \
  X(nvrtcGetOptiXIRSize, JITCACHE_KIND_NVRTC) \
  X(nvrtcGetOptiXIR, JITCACHE_KIND_NVRTC) \
  X(jitcache_module_load_data_ex, JITCACHE_KIND_API_CURESULT) \
  X(jitcache_module_load_data, JITCACHE_KIND_API_CURESULT) \
  X(jitcache_module_load, JITCACHE_KIND_API_CURESULT) \
  X(jitcache_module_unload, JITCACHE_KIND_API_CURESULT) \
  X(jitcache_last_load_info, JITCACHE_KIND_API_INT) \
  X(jitcache_outcome_name, JITCACHE_KIND_API_TEXT) \
  X(jitcache_stage_name, JITCACHE_KIND_API_TEXT) \
  X(jitcache_get_counters, JITCACHE_KIND_API_INT) \
  X(jitcache_driver_version, JITCACHE_KIND_API_INT) \
  X(jitcache_configure, JITCACHE_KIND_API_INT) \
  X(jitcache_nvrtc_create_program, JITCACHE_KIND_API_INT) \
  X(jitcache_nvrtc_add_name_expression, JITCACHE_KIND_API_INT) \
  X(jitcache_nvrtc_compile_program, JITCACHE_KIND_API_INT) \
  X(jitcache_nvrtc_get_output_size, JITCACHE_KIND_API_INT) \
  X(jitcache_nvrtc_get_output, JITCACHE_KIND_API_INT) \
  X(jitcache_nvrtc_get_lowered_name, JITCACHE_KIND_API_INT) \
  X(jitcache_nvrtc_destroy_program, JITCACHE_KIND_API_INT)
/* clang-format on */

#define JITCACHE_COUNT_NAME(name, kind) +1
enum { JITCACHE_HOOKED_NAME_COUNT = 0 JITCACHE_HOOKED_NAMES(JITCACHE_COUNT_NAME) };

#endif
