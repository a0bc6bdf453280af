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
/* Length of fake_cuda_launch::kernel_name and fake_cuda_image_info::entry_point, NUL included. */
#define FAKE_CUDA_NAME_CAPACITY 256

/* Calls of each load entry point, whatever their outcome (injected failures included). */
typedef struct fake_cuda_load_calls {
  unsigned long long module_load_data;       /* cuModuleLoadData */
  unsigned long long module_load_data_ex;    /* cuModuleLoadDataEx */
  unsigned long long module_load;            /* cuModuleLoad (a path) */
  unsigned long long module_load_fatbinary;  /* cuModuleLoadFatBinary */
  unsigned long long library_load_data;      /* cuLibraryLoadData */
  unsigned long long library_load_from_file; /* cuLibraryLoadFromFile */
} fake_cuda_load_calls;

typedef struct fake_cuda_counters {
  /* Cubins handed in by the caller (directly, or chosen from a fat binary) that loaded / were
   * refused (200 malformed, 209 wrong architecture). Injected failures are not counted here. */
  unsigned long long cubin_loads_ok;
  unsigned long long cubin_loads_failed;
  /* PTX compiled by a load entry point (cuModuleLoad*, cuLibraryLoad*), directly or chosen from a fat
   * binary: every time the fake's "JIT" (nvJitLink) ran for a load, whatever the outcome. */
  unsigned long long ptx_jit_compiles;
  unsigned long long ptx_jit_failures;
  /* PTX compiled by cuLinkAddData(CU_JIT_INPUT_PTX), and successful cuLinkComplete calls. */
  unsigned long long link_compiles;
  unsigned long long link_completes;
  /* Load calls (any entry point) given a fat binary (container or wrapper), whatever the outcome. */
  unsigned long long fatbin_loads;
  /* Every cuModuleLoad{,Data,DataEx,FatBinary} call, and the number of modules they loaded that are
   * not yet unloaded (a library's module is not counted here). */
  unsigned long long module_load_calls;
  unsigned long long modules_alive;
  /* Calls that failed because of FAKE_CUDA_FAIL / fake_cuda_set_failure. */
  unsigned long long injected_failures;
  /* Calls per load entry point. */
  fake_cuda_load_calls load_calls;
  /* Libraries loaded (successfully or with a deferred error) and not yet unloaded. */
  unsigned long long libraries_alive;
  /* cuLaunchKernel{,_ptsz} calls that were accepted. */
  unsigned long long kernels_launched;
  /* cuLinkAddFile{,_v2} calls, whatever the outcome. */
  unsigned long long link_add_file_calls;
  /* cuGetProcAddress{,_v2} calls, whatever the outcome (cudart's route to every entry point). */
  unsigned long long get_proc_address_calls;
  /* Times a library loaded with CU_LIBRARY_BINARY_IS_PRESERVED was found with its image changed or
   * unreadable before cuLibraryUnload (each answered CUDA_ERROR_ILLEGAL_STATE). */
  unsigned long long preserved_image_violations;
  /* Why the last failing load or link failed: the JIT's error log or the fake's own reason. */
  char last_error_log[FAKE_CUDA_LOG_CAPACITY];
} fake_cuda_counters;

/* What fake_cuda_last_image reports: the kind of image a load entry point was handed. */
typedef enum fake_cuda_image_kind {
  FAKE_CUDA_IMAGE_NONE = 0,   /* nothing was loaded since start or the last fake_cuda_reset_counters */
  FAKE_CUDA_IMAGE_CUBIN = 1,  /* an ELF image */
  FAKE_CUDA_IMAGE_PTX = 2,    /* NUL-terminated text (PTX or not) */
  FAKE_CUDA_IMAGE_FATBIN = 3, /* a fat binary container, or the nvcc wrapper around one */
} fake_cuda_image_kind;

typedef struct fake_cuda_image_info {
  int kind;                 /* fake_cuda_image_kind */
  int complete;             /* 1: size and sha256 cover the whole image; 0: it could not be read whole (cut
                               short before unreadable memory, or no pointer at all), size and sha256 are 0 */
  int fatbin_wrapper;       /* 1: handed as the 0x466243B1 wrapper; the bytes are those of its container */
  unsigned long long size;  /* bytes: a cubin's ELF extent, PTX text without its NUL, a container's
                               16-byte header and body; for cuModuleLoad/cuLibraryLoadFromFile the file */
  unsigned char sha256[32]; /* SHA-256 of exactly those bytes */
  char sha256_hex[65];      /* the same, as 64 lowercase hex digits */
  char entry_point[FAKE_CUDA_NAME_CAPACITY]; /* "cuLibraryLoadData", "cuModuleLoad", ... */
  unsigned long long sequence;               /* 1 for the first image recorded since the last reset, then 2, 3 ... */
} fake_cuda_image_info;

/* What fake_cuda_last_launch reports. */
typedef struct fake_cuda_launch {
  char kernel_name[FAKE_CUDA_NAME_CAPACITY]; /* the entry function, e.g. "reduce_partial" */
  unsigned grid[3];
  unsigned block[3];
  unsigned shared_mem_bytes;
  int through_kernel_handle;   /* 1: a CUkernel (cuLibraryGetKernel) was cast to CUfunction */
  unsigned long long sequence; /* kernels_launched after this launch */
} fake_cuda_launch;

/* Makes `point` fail with `code` (a CUresult) on its next `times` calls; times <= 0 means every call;
 * code 0 removes the point. Points: ctx, load_cubin, load_ptx, load_fatbin, link_create, link_add,
 * link_complete, load_library, launch. Returns 0, or -1 for an unknown point (nothing changes). */
int fake_cuda_set_failure(const char* point, int code, int times);
void fake_cuda_clear_failures(void);

void fake_cuda_get_counters(fake_cuda_counters* out);
/* Zeroes the counters except modules_alive and libraries_alive, which track live handles, and forgets
 * the last image and the last launch. */
void fake_cuda_reset_counters(void);

/* The image last handed to a load entry point (cuModuleLoad*, cuLibraryLoad*), so a test can prove
 * which bytes reached the "driver". Returns 0, or -1 when none was (*out is then zeroed, kind NONE). */
int fake_cuda_last_image(fake_cuda_image_info* out);
/* The last accepted cuLaunchKernel{,_ptsz}. Returns 0, or -1 when there was none (*out zeroed). */
int fake_cuda_last_launch(fake_cuda_launch* out);

/* Device 0 and driver as FAKE_CUDA_CC / FAKE_CUDA_DRIVER_VERSION set them: cc is 10 * major + minor
 * (90 = 9.0); 0 leaves a value as it is. Other devices stay. Returns -1 for a value out of range
 * (nothing changes). */
int fake_cuda_set_device(int cc, int driver_version);
/* Every device, as FAKE_CUDA_DEVICES: "90,80" is device 0 at CC 9.0 (the current context's) and
 * device 1 at CC 8.0. NULL or "" leaves one device, device 0 as it is. Returns -1 for a list that does
 * not parse (nothing changes). */
int fake_cuda_set_devices(const char* comma_separated_ccs);
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
