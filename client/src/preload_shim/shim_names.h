/* The shim's hooked names (hooked_names.h) as tables, and the lookup of a name among them.
 *
 * Rationale: dlsym is called for every symbol a Python extension or a plugin looks up, and cudart
 * looks hundreds of driver names up at start; a name that is not hooked must cost next to nothing.
 * jitcache_shim_hooked_index rejects most names on their first characters and finds the rest in an
 * open-addressing hash table (one string comparison for a hooked name), built once on first use.
 * Thread safety: the tables are constant; the hash table is built idempotently with atomic stores
 * (racing builders store the same values) and published with a release flag. */
#ifndef JITCACHE_PRELOAD_SHIM_SHIM_NAMES_H
#define JITCACHE_PRELOAD_SHIM_SHIM_NAMES_H

#include <client/src/preload_shim/hooked_names.h>

extern const char* const jitcache_shim_names[JITCACHE_HOOKED_NAME_COUNT];
extern const unsigned char jitcache_shim_kinds[JITCACHE_HOOKED_NAME_COUNT];
/* The exported function (the shim's stub) of each name. */
extern void* const jitcache_shim_stubs[JITCACHE_HOOKED_NAME_COUNT];

/* The index of `name` among the names a program must not find without their library (the driver's,
 * cudart's and nvJitLink's names: not libjitcache's API), or -1. */
int jitcache_shim_hooked_index(const char* name);

#endif
