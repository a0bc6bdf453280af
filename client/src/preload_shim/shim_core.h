/* The core (libjitcache-preload-core.so): the cache's load path, loaded beside the shim with
 * RTLD_LOCAL the first time a hooked call needs it, and never before (docs/transparent.md "The shim
 * and the core"). Rationale: a process that never touches CUDA must not pay for libstdc++,
 * libcrypto, libzstd, liblz4 and libxxhash, nor for the core's relocations.
 * Thread safety: loading is idempotent (dlopen of one file returns one object; the core's attach
 * keeps one answer); the result is published with an atomic, so racing first callers are safe. */
#ifndef JITCACHE_PRELOAD_SHIM_SHIM_CORE_H
#define JITCACHE_PRELOAD_SHIM_SHIM_CORE_H

#include <client/src/preload_shim/shim_interface.h>

/* The attached core, loading it on first use; NULL when it cannot be loaded (its file missing or
 * from another build): every hook is then the real function, as with JITCACHE_DISABLE. */
const struct jitcache_core* jitcache_shim_core(void);

#endif
