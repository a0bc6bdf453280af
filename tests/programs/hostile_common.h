/* What the hostile programs share (tests/programs/README.md "Hostile programs"): a PTX text and
 * its variants (each a different module, so a load of a new variant is a miss that talks to the
 * daemon), and one load that unloads what it loaded. They print only what is the same with and
 * without jitcache: CUresults and what the program itself observed. */
#ifndef JITCACHE_TESTS_PROGRAMS_HOSTILE_COMMON_H
#define JITCACHE_TESTS_PROGRAMS_HOSTILE_COMMON_H

#include <stdio.h>
#include <string.h>

#include <tests/programs/program_io.h>

/* The base text with a comment line that makes it variant `n` (a module of its own). The caller
 * frees the result. */
static inline char* ptx_variant(const char* base, int n) {
  size_t length = strlen(base);
  char* text = malloc(length + 64);
  if (text == NULL) return NULL;
  memcpy(text, base, length);
  snprintf(text + length, 64, "\n// variant %d\n", n);
  return text;
}

/* Loads `ptx`, finds `kernel` when asked, unloads; the first failing result, else CUDA_SUCCESS. */
static inline CUresult load_and_unload(const char* ptx, const char* kernel) {
  CUmodule module = NULL;
  CUresult result = cuModuleLoadData(&module, ptx);
  if (result != CUDA_SUCCESS) return result;
  if (kernel != NULL) {
    CUfunction function = NULL;
    result = cuModuleGetFunction(&function, module, kernel);
  }
  CUresult unloaded = cuModuleUnload(module);
  return result != CUDA_SUCCESS ? result : unloaded;
}

/* The driver started, as every CUDA program does before loading (the fake needs no context). */
static inline int start_driver(void) { return cuInit(0) == CUDA_SUCCESS; }

#endif
