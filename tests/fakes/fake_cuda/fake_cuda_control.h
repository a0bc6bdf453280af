/* Control API of the fake CUDA driver (tests/fakes/README.md): in-process tests find these with
 * dlsym on the same handle they opened the fake with, and use them to inject failures and to read
 * what the "driver" was asked to do.
 *
 * Every function may be called from any thread at any time, including while other threads are
 * inside driver entry points: configuration is guarded by a mutex and counters are atomic, so a
 * snapshot is consistent per counter (not across counters while loads are in flight).
 */
#ifndef JITCACHE_FAKE_CUDA_CONTROL_H
#define JITCACHE_FAKE_CUDA_CONTROL_H

#ifdef __cplusplus
extern "C" {
#endif

/* Length of fake_cuda_counters::last_error_log, NUL included. */
#define FAKE_CUDA_LOG_CAPACITY 4096

typedef struct fake_cuda_counters {
  /* Cubins handed in by the caller (directly, or chosen from a fat binary) that loaded / were
   * refused (200 malformed, 209 wrong architecture). Injected failures are not counted here. */
  unsigned long long cubin_loads_ok;
  unsigned long long cubin_loads_failed;
  /* PTX compiled by cuModuleLoadData(Ex), directly or chosen from a fat binary: every time the
   * fake's "JIT" (nvJitLink) ran for a module load, whatever the outcome. */
  unsigned long long ptx_jit_compiles;
  unsigned long long ptx_jit_failures;
  /* PTX compiled by cuLinkAddData(CU_JIT_INPUT_PTX), and successful cuLinkComplete calls. */
  unsigned long long link_compiles;
  unsigned long long link_completes;
  /* cuModuleLoadData(Ex) calls given a fat binary (container or wrapper), whatever the outcome. */
  unsigned long long fatbin_loads;
  /* Every cuModuleLoadData(Ex) call, and the number of modules loaded and not yet unloaded. */
  unsigned long long module_load_calls;
  unsigned long long modules_alive;
  /* Calls that failed because of FAKE_CUDA_FAIL / fake_cuda_set_failure. */
  unsigned long long injected_failures;
  /* Why the last failing load or link failed: the JIT's error log or the fake's own reason. */
  char last_error_log[FAKE_CUDA_LOG_CAPACITY];
} fake_cuda_counters;

/* Makes `point` fail with `code` (a CUresult) on its next `times` calls; times <= 0 means every call;
 * code 0 removes the point. Points: ctx, load_cubin, load_ptx, load_fatbin, link_create, link_add,
 * link_complete. Returns 0, or -1 for an unknown point (nothing changes). */
int fake_cuda_set_failure(const char* point, int code, int times);
void fake_cuda_clear_failures(void);

void fake_cuda_get_counters(fake_cuda_counters* out);
/* Zeroes the counters except modules_alive, which tracks live handles. */
void fake_cuda_reset_counters(void);

/* Device and driver as FAKE_CUDA_CC / FAKE_CUDA_DRIVER_VERSION set them: cc is 10 * major + minor
 * (90 = 9.0); 0 leaves a value as it is. Returns -1 for a value out of range (nothing changes). */
int fake_cuda_set_device(int cc, int driver_version);
/* Entry points cuGetProcAddress reports as not found, as FAKE_CUDA_HIDE: a comma-separated list of
 * base names that replaces the current one; NULL or "" hides nothing. */
void fake_cuda_set_hidden(const char* comma_separated_names);
/* As FAKE_CUDA_CRASH_ON_TRUNCATED: non-zero makes a cubin that fails validation abort(). */
void fake_cuda_set_crash_on_truncated(int enabled);
/* Throws away every setting made through this API and reads the FAKE_CUDA_* variables again. */
void fake_cuda_reload_environment(void);

#ifdef __cplusplus
}
#endif

#endif /* JITCACHE_FAKE_CUDA_CONTROL_H */
