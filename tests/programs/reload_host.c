/* A library opened with dlopen that finds a plugin's function with dlsym(RTLD_DEFAULT), as plugin
 * hosts do (plugin_reload.c). glibc records that this library depends on the plugin that defined
 * the symbol, and names this library in a failed lookup's dlerror(): both are what the program
 * must see with libjitcache-preload.so loaded too. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>

/* The function's result, or -1 with dlerror()'s text in `error`. */
__attribute__((visibility("default"))) int reload_host_call(const char* symbol, char* error, size_t size) {
  (void)dlerror();
  int (*function)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, symbol);
  if (function != NULL) return function();
  const char* text = dlerror();
  snprintf(error, size, "%s", text != NULL ? text : "(no error)");
  return -1;
}
