/* Two libraries that define the same name, as stacked interposers do: route_resolvers asks the
 * first one to look up "the next probe_name after me" (dlsym(RTLD_NEXT)), which must be the second
 * library's, also with libjitcache-preload.so's dlsym in front. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stddef.h>

const char* probe_name(void) { return "a"; }

const char* next_probe_name(void) {
  const char* (*next)(void) = (const char* (*)(void))dlsym(RTLD_NEXT, "probe_name");
  return next != NULL ? next() : "none";
}
