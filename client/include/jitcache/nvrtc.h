/* NVRTC compiles through the cache, for programs that link libjitcache (docs/client-guide.md
 * "NVRTC"): the NVRTC program lifecycle under jitcache_nvrtc_* names, with NVRTC's own arguments
 * and result codes (an nvrtcResult as int; the program handle is NVRTC's nvrtcProgram). They call
 * the NVRTC the process has loaded, else libnvrtc.so.13, else libnvrtc.so.12, and cache its
 * compiles as libjitcache-preload.so does (docs/transparent.md "NVRTC compiles"): a hit does not
 * compile, and every later call answers what NVRTC answered. Where no NVRTC can be found every
 * call answers NVRTC_ERROR_INTERNAL_ERROR (11).
 *
 * Thread safety: as NVRTC's functions. */
#ifndef JITCACHE_NVRTC_H
#define JITCACHE_NVRTC_H

#include <jitcache/jitcache.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Which output jitcache_nvrtc_get_output{_size,} reads. */
enum jitcache_nvrtc_output {
  JITCACHE_NVRTC_LOG = 0,    /* nvrtcGetProgramLog */
  JITCACHE_NVRTC_PTX = 1,    /* nvrtcGetPTX */
  JITCACHE_NVRTC_CUBIN = 2,  /* nvrtcGetCUBIN */
  JITCACHE_NVRTC_LTOIR = 3,  /* nvrtcGetLTOIR */
  JITCACHE_NVRTC_OPTIXIR = 4 /* nvrtcGetOptiXIR */
};

/* As nvrtcCreateProgram. */
JITCACHE_API int jitcache_nvrtc_create_program(void** program, const char* source, const char* name, int header_count,
                                               const char* const* headers, const char* const* include_names);
/* As nvrtcAddNameExpression. */
JITCACHE_API int jitcache_nvrtc_add_name_expression(void* program, const char* expression);
/* As nvrtcCompileProgram; jitcache_last_load_info tells what the cache did (entry point
 * "nvrtcCompileProgram"). */
JITCACHE_API int jitcache_nvrtc_compile_program(void* program, int option_count, const char* const* options);
/* As nvrtcGet{ProgramLog,PTX,CUBIN,LTOIR,OptiXIR}Size and the calls that copy them;
 * NVRTC_ERROR_INVALID_INPUT (3) for an output outside the enum. */
JITCACHE_API int jitcache_nvrtc_get_output_size(void* program, int output, size_t* size);
JITCACHE_API int jitcache_nvrtc_get_output(void* program, int output, char* out);
/* As nvrtcGetLoweredName. */
JITCACHE_API int jitcache_nvrtc_get_lowered_name(void* program, const char* expression, const char** lowered);
/* As nvrtcDestroyProgram. */
JITCACHE_API int jitcache_nvrtc_destroy_program(void** program);

#ifdef __cplusplus
}
#endif

#endif
