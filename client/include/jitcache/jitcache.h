/* libjitcache: a persistent, shared JIT cache in place of cuModuleLoadDataEx.
 *
 * Replace
 *     cuModuleLoadDataEx(&module, image, n, options, values);
 * with
 *     jitcache_module_load_data_ex(&module, image, n, options, values);
 * and a PTX (or a fat binary that needs its PTX JIT-compiled) is compiled once per host and served
 * from jitcached afterwards. The contract is the driver's: same arguments, same CUresult values, the
 * caller's JIT log buffers and wall-time slot filled on every path. When the cache cannot help (no
 * daemon, a slow or broken daemon, caching disabled, an option it does not understand) the call does
 * exactly what cuModuleLoadDataEx would have done; the cache never makes a load fail.
 *
 * The driver is opened at run time (dlopen "libcuda.so.1", or $JITCACHE_CUDA_DRIVER), so linking this
 * library adds no dependency on libcuda. A current CUDA context is required, as for the driver's calls.
 *
 * Thread safety: every function may be called from any number of threads at once. Nothing here
 * writes to stdout, installs signal handlers, throws, or aborts; the only output is at most one
 * warning line per process on stderr when the daemon cannot be used (silence it with
 * JITCACHE_QUIET=1 or jitcache_config.quiet). Guide: docs/client-guide.md.
 */
#ifndef JITCACHE_JITCACHE_H
#define JITCACHE_JITCACHE_H

#include <cuda.h>
#include <stddef.h>
#include <stdint.h>

#if defined(JITCACHE_BUILDING_LIBRARY)
#define JITCACHE_API __attribute__((visibility("default")))
#else
#define JITCACHE_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

#define JITCACHE_VERSION_MAJOR 0
#define JITCACHE_VERSION_MINOR 1
#define JITCACHE_VERSION_PATCH 0

/* --- Loading: the driver's contract ------------------------------------------------------------ */

/* As cuModuleLoadDataEx: `image` is PTX text (NUL-terminated), a fat binary (container or the
 * __fatBinC_Wrapper_t nvcc emits) or a cubin (ELF). */
JITCACHE_API CUresult jitcache_module_load_data_ex(CUmodule* module, const void* image, unsigned int num_options,
                                                   CUjit_option* options, void** option_values);
/* As cuModuleLoadData. */
JITCACHE_API CUresult jitcache_module_load_data(CUmodule* module, const void* image);
/* As cuModuleLoad: reads the file (PTX, fat binary or cubin) and loads it as above;
 * CUDA_ERROR_FILE_NOT_FOUND when it cannot be read. */
JITCACHE_API CUresult jitcache_module_load(CUmodule* module, const char* path);
/* As cuModuleUnload, through the same driver the loads used (for programs that do not link libcuda). */
JITCACHE_API CUresult jitcache_module_unload(CUmodule module);

/* --- What happened -------------------------------------------------------------------------------- */

typedef enum jitcache_load_outcome {
  JITCACHE_OUTCOME_NONE = 0,         /* no load on this thread yet */
  JITCACHE_OUTCOME_PASS_THROUGH = 1, /* nothing to cache: a cubin, or a fat binary holding a cubin
                                        for this device; handed to the driver as given */
  JITCACHE_OUTCOME_HIT = 2,          /* the image came from the cache */
  JITCACHE_OUTCOME_COMPILED_BY_DAEMON = 3,
  JITCACHE_OUTCOME_COMPILED_LOCALLY = 4,          /* a miss: JIT-compiled with the driver here, then stored */
  JITCACHE_OUTCOME_REBUILT_AFTER_FAILED_LOAD = 5, /* a hit failed to load: reported, rebuilt, stored */
  JITCACHE_OUTCOME_UNCACHED_FALLBACK = 6          /* the cache could not help (see reason): plain
                                                     cuModuleLoadDataEx with the caller's options */
} jitcache_load_outcome;

/* The stage of the load walk a failure belongs to. */
typedef enum jitcache_load_stage {
  JITCACHE_STAGE_NONE = 0,
  JITCACHE_STAGE_IMAGE = 1,       /* no image for this device (e.g. CUDA_ERROR_NO_BINARY_FOR_GPU) */
  JITCACHE_STAGE_PTX_VERSION = 2, /* the PTX ISA is newer than the driver can JIT */
  JITCACHE_STAGE_JIT = 3,         /* the PTX failed to compile (the log says why) */
  JITCACHE_STAGE_LOAD = 4,        /* relocation or resources: the compiled image failed to load */
  JITCACHE_STAGE_CACHE = 5        /* the cache itself (daemon, key, transport); never fails a load */
} jitcache_load_stage;

typedef struct jitcache_load_info {
  size_t struct_size; /* set by the caller to sizeof(jitcache_load_info) */
  jitcache_load_outcome outcome;
  CUresult result;           /* what the call returned */
  jitcache_load_stage stage; /* where it failed, or where the cache gave up (NONE on a clean path) */
  CUresult stage_result;     /* the CUresult of that stage (e.g. the failed load of a hit) */
  char result_name[48];      /* e.g. "CUDA_ERROR_INVALID_PTX"; names stage_result */
  char reason[1024];         /* why this outcome, in words, with the compiler's log when there is one */
  char key_id[65];           /* hex SHA-256 key id; empty when no key was built */
  char arch[33];             /* the key's arch, e.g. "sm_90a" */
  /* Time spent in each step, in nanoseconds (0 when the step did not run). */
  uint64_t ns_classify; /* classify the image, walk a fat binary */
  uint64_t ns_key;      /* query the device and driver, digest the PTX, canonicalise options */
  uint64_t ns_lookup;   /* connect, LOOKUP, receive and verify the image */
  uint64_t ns_compile;  /* JIT (daemon or local) */
  uint64_t ns_load;     /* the driver loading the image (every attempt) */
  uint64_t ns_report;   /* REPORT_FAILURE after a failed load */
  uint64_t ns_put;      /* PUT of a locally compiled image */
  uint64_t ns_total;    /* the whole call */
  /* Added after 0.1.0 (a smaller struct_size gets the fields above only): */
  uint64_t ns_setup; /* the library's own set-up: settings and the driver, both opened on
                        the first use in a process (a few microseconds at most later) */
} jitcache_load_info;

/* Copies the calling thread's last load record. Returns 0, or -1 when `out` is NULL or its
 * struct_size is smaller than the first version of the struct. */
JITCACHE_API int jitcache_last_load_info(jitcache_load_info* out);

JITCACHE_API const char* jitcache_outcome_name(jitcache_load_outcome outcome); /* "hit", ... */
JITCACHE_API const char* jitcache_stage_name(jitcache_load_stage stage);       /* "jit", ... */

/* Process-wide counts since start (or the last jitcache_configure). */
typedef struct jitcache_counters {
  size_t struct_size; /* set by the caller to sizeof(jitcache_counters) */
  uint64_t loads;
  uint64_t pass_through;
  uint64_t hits;
  uint64_t compiled_by_daemon;
  uint64_t compiled_locally;
  uint64_t rebuilt_after_failed_load;
  uint64_t uncached_fallbacks;
  uint64_t daemon_unavailable; /* loads that found the daemon absent, slow or broken */
  uint64_t failure_reports;    /* REPORT_FAILURE sent after a hit failed to load */
  uint64_t puts;
  uint64_t put_failures;
  uint64_t corrupt_replies; /* images whose size, checksum or ELF bounds failed in the client */
  /* Added after 0.1.0 (a smaller struct_size gets the fields above only): */
  uint64_t fast_key_mismatches; /* entries found by the fast key whose content digest was not the
                                   PTX's (an XXH3 collision): looked up again by the full key */
  /* Added after fast_key_mismatches (a smaller struct_size gets the fields above only): */
  uint64_t published_hits;    /* hits loaded from the daemon's published copy, without a round
                                 trip (also counted in hits) */
  uint64_t published_rejects; /* published copies found but not trusted (owner, mode, format,
                                 checksum, key or content digest): loaded through the socket */
  /* Added after published_rejects (a smaller struct_size gets the fields above only): */
  uint64_t lookups; /* LOOKUP requests sent to the daemon: one per load that asks it
                       (by fast key where the daemon has fast keys, else by key), a
                       second only after an entry whose content digest was not the
                       PTX's, or when the image was too large for the first reply */
} jitcache_counters;

JITCACHE_API int jitcache_get_counters(jitcache_counters* out);

/* The driver libjitcache uses, compared with the CUDA version it was built against: writes the
 * driver's cuDriverGetVersion (0 when no driver could be opened) and the build-time CUDA_VERSION, and
 * returns the number of entry points the driver lacks (each one is named, with the API version that
 * introduced it, in the reason of a load that needed it), or -1 when the driver cannot be opened. */
JITCACHE_API int jitcache_driver_version(int* driver_api, int* built_against_api);

/* --- Configuration (optional) --------------------------------------------------------------------- */

typedef struct jitcache_config {
  size_t struct_size;              /* set by the caller to sizeof(jitcache_config) */
  const char* socket_path;         /* NULL: $JITCACHE_SOCKET, the config file, or the default */
  int disable;                     /* non-zero: no caching; every load is a plain driver load */
  unsigned int connect_timeout_ms; /* 0: the default (100 ms) */
  unsigned int request_timeout_ms; /* 0: the default (2000 ms); a daemon slower than this is skipped */
  int quiet;                       /* non-zero: no warning on stderr */
  /* Added after 0.1.0 (a caller built against 0.1.0 passes a smaller struct_size; the field then
     takes its default): */
  unsigned int compile_timeout_ms; /* 0: $JITCACHE_COMPILE_TIMEOUT_MS, else 150000 ms. How long a
                                      miss waits for the daemon to compile it (COMPILE) before
                                      JIT-compiling here instead; a compile takes seconds, so this
                                      is not request_timeout */
} jitcache_config;

/* Replaces the configuration for loads that start after it returns, drops pooled connections and
 * forgets that the daemon was unavailable, and resets the counters. NULL returns to the defaults
 * from the environment. Returns 0, or -1 when struct_size is too small. */
JITCACHE_API int jitcache_configure(const jitcache_config* config);

#ifdef __cplusplus
}
#endif

#endif /* JITCACHE_JITCACHE_H */
