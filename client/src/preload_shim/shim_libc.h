/* The shim's view of the dynamic loader: libc's own dlsym/dlvsym (found without a name lookup,
 * since every name lookup in the process reaches the shim's dlsym first), the next dlsym/dlvsym in
 * the search order, the next definition of a name after the shim, and the shim's own address range.
 * Thread safety: every function may be called from any thread, before main and after fork(); the
 * values found are kept in atomics written with the one answer the process has. */
#ifndef JITCACHE_PRELOAD_SHIM_SHIM_LIBC_H
#define JITCACHE_PRELOAD_SHIM_SHIM_LIBC_H

typedef void* (*jitcache_dlsym_fn)(void*, const char*);
typedef void* (*jitcache_dlvsym_fn)(void*, const char*, const char*);

/* libc's functions (libdl's before glibc 2.34); never NULL (a stand-in that finds nothing). */
jitcache_dlsym_fn jitcache_shim_libc_dlsym(void);
jitcache_dlvsym_fn jitcache_shim_libc_dlvsym(void);

/* The definition after the shim's of "dlsym" / "dlvsym": another interposer's, else libc's. */
jitcache_dlsym_fn jitcache_shim_next_dlsym(void);
jitcache_dlvsym_fn jitcache_shim_next_dlvsym(void);

/* dlsym(RTLD_NEXT, name) as the shim's own code asks it: the next definition after the shim. */
void* jitcache_shim_next_definition(const char* name);
void* jitcache_shim_next_versioned(const char* name, const char* version);

/* Whether `address` lies in the shim. */
int jitcache_shim_contains(const void* address);

/* Clears dlerror() after a lookup that found something, as glibc's own successful dlsym leaves it
 * (the shim's own failed lookups on the way must not show). Returns `answer`. */
void* jitcache_shim_found(void* answer);

#endif
