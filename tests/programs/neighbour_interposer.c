/* Another LD_PRELOAD interposer, as tracers and quota libraries are: it hooks dlsym and
 * cuModuleLoadData, counts the program's calls (dlsym of names starting "neighbour_probe_", every
 * cuModuleLoadData), and passes each call on to the next definition in the search order. The
 * program asks for the counts with neighbour_interposer_counts (neighbour_calls.c). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stddef.h>
#include <string.h>

typedef void* (*dlsym_fn)(void*, const char*);
typedef int (*load_data_fn)(void**, const void*);

static int g_dlsym_calls;
static int g_load_calls;

/* As interposers of dlsym do: the next one by its version, since a plain dlsym call from here
 * would reach this library's own. */
static dlsym_fn next_dlsym(void) {
  static dlsym_fn next;
  if (next == NULL) next = (dlsym_fn)dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34");
  if (next == NULL) next = (dlsym_fn)dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.2.5");
  return next;
}

__attribute__((visibility("default"))) void* dlsym(void* handle, const char* name) {
  if (strncmp(name, "neighbour_probe_", 16) == 0) __atomic_add_fetch(&g_dlsym_calls, 1, __ATOMIC_RELAXED);
  return next_dlsym()(handle, name);
}

__attribute__((visibility("default"))) int cuModuleLoadData(void** module, const void* image) {
  static load_data_fn next;
  __atomic_add_fetch(&g_load_calls, 1, __ATOMIC_RELAXED);
  if (next == NULL) next = (load_data_fn)next_dlsym()(RTLD_NEXT, "cuModuleLoadData");
  return next != NULL ? next(module, image) : 3; /* CUDA_ERROR_NOT_INITIALIZED */
}

__attribute__((visibility("default"))) void neighbour_interposer_counts(int* dlsym_calls, int* load_calls) {
  *dlsym_calls = __atomic_load_n(&g_dlsym_calls, __ATOMIC_RELAXED);
  *load_calls = __atomic_load_n(&g_load_calls, __ATOMIC_RELAXED);
}
