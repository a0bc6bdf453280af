/* What the shim (libjitcache-preload.so, this folder) and the core (libjitcache-preload-core.so,
 * client/src/preload/) hand each other when the core is loaded (docs/transparent.md "The shim and
 * the core"). The shim calls the core's JITCACHE_CORE_ATTACH once per process, the first time a
 * hooked call needs the cache; both sides index names by hooked_names.h.
 *
 * Thread safety: both structs are constant once handed over; every function may be called from
 * any thread, before main and after fork(). */
#ifndef JITCACHE_PRELOAD_SHIM_SHIM_INTERFACE_H
#define JITCACHE_PRELOAD_SHIM_SHIM_INTERFACE_H

#ifdef __cplusplus
extern "C" {
#endif

/* Raised whenever either struct or hooked_names.h changes: a core from another build refuses. */
#define JITCACHE_SHIM_INTERFACE_VERSION 2u
#define JITCACHE_CORE_ATTACH "jitcache_preload_core_attach"
#define JITCACHE_CORE_FILE "libjitcache-preload-core.so"

struct jitcache_shim {
  unsigned version;
  unsigned name_count;
  const char* const* names; /* hooked_names.h, in order */
  /* The shim's exported function for each name: what a program is handed for a hooked symbol. */
  void* const* stubs;
  /* The next definition of `name` after the shim in the search order (dlsym(RTLD_NEXT) made from
   * the shim), or NULL: the "real" function, so that another interposer after ours sees the call. */
  void* (*next_definition)(const char* name);
  /* The dlsym and dlvsym that come after the shim's (another interposer's, else libc's): the
   * lookups a program asked for go through them. */
  void* (*next_dlsym)(void* handle, const char* name);
  void* (*next_dlvsym)(void* handle, const char* name, const char* version);
  /* libc's own dlsym and dlvsym, for the core's own lookups (never a hook, never an interposer). */
  void* (*libc_dlsym)(void* handle, const char* name);
  void* (*libc_dlvsym)(void* handle, const char* name, const char* version);
  /* JITCACHE_DISABLE as the shim read it (shim_disable.h): every hook is the real function. */
  int (*disabled)(void);
  /* fd 2 as the process started (the shim's constructor): 1 and its device and inode when it was
   * open, 0 when it was closed. The core loads at the first hooked call, by which time a program
   * may have closed its stderr and opened a data file on 2; the one warning line goes only to the
   * stream the program started with (docs/client-guide.md "Streams"). */
  int (*program_stderr)(unsigned long long* device, unsigned long long* inode);
};

struct jitcache_core {
  /* The core's function for each name of hooked_names.h. */
  void* const* entries;
  /* What the program at `caller` is handed for a hooked `name` that dlsym/dlvsym on a handle found
   * at `found` (not NULL, not in the shim): `found`, or the stub that stands for it. */
  void* (*route)(const char* name, void* found, const void* caller);
};

/* NULL when the core cannot serve this shim (another interface version or name count). */
typedef const struct jitcache_core* (*jitcache_core_attach_fn)(const struct jitcache_shim* shim);

#ifdef __cplusplus
}
#endif

#endif
