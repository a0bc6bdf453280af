/* The preload library `jitcache run` names, and LD_PRELOAD with it first: the lookup of
 * client/cli/preload_library.hpp and the list of client/cli/preload_environment.hpp, in C, for
 * the cases that succeed. Where the lookup fails, the front has nothing to say: the full CLI runs
 * the same lookup and names every path it tried (client/front/front_run.h). Strings returned are
 * the caller's to free; NULL also when memory runs out. Thread safety: free functions over the file
 * system and the environment. */
#ifndef JITCACHE_CLIENT_FRONT_FRONT_PRELOAD_H
#define JITCACHE_CLIENT_FRONT_FRONT_PRELOAD_H

/* The library's absolute path as find_preload_library() returns it, or NULL where that returns an
 * error. `own_directory` is the running executable's directory, NULL when unknown. */
char* front_find_preload_library(const char* own_directory);

/* with_preload(current, library): `library`, then every entry of `current` (separated by colons or
 * spaces) that is not empty and names neither the same text nor the same file, in order, joined by
 * colons. */
char* front_with_preload(const char* current, const char* library);

#endif
