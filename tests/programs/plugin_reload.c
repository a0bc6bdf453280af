/* Plugin reload: a host library (reload_host.c) finds the plugin's function with
 * dlsym(RTLD_DEFAULT); after dlclose of both the plugin must be gone from the process, so that the
 * plugin's file, replaced by a new build, loads as the new code. Prints the versions found, whether
 * the plugin was unloaded, and the dlerror() text of a failed lookup from the host.
 * Usage: plugin_reload HOST PLUGIN_V1 PLUGIN_V2 WORK_DIR */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

typedef int (*host_call_fn)(const char*, char*, size_t);

static int copy_file(const char* from, const char* to) {
  FILE* in = fopen(from, "rb");
  if (in == NULL) return -1;
  unlink(to); /* a new file, as an installer writes it, not the mapped one rewritten */
  FILE* out = fopen(to, "wb");
  if (out == NULL) {
    fclose(in);
    return -1;
  }
  char buffer[65536];
  size_t n;
  while ((n = fread(buffer, 1, sizeof buffer, in)) > 0) fwrite(buffer, 1, n, out);
  fclose(in);
  return fclose(out);
}

/* Loads the host and the plugin at `path`, calls the plugin through the host, and closes both. */
static int load_and_call(const char* host_path, const char* path, int report_missing) {
  void* host = dlopen(host_path, RTLD_NOW | RTLD_LOCAL);
  void* plugin = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
  if (host == NULL || plugin == NULL) {
    printf("cannot load: %s\n", dlerror());
    return -1;
  }
  host_call_fn call = (host_call_fn)dlsym(host, "reload_host_call");
  char error[1024] = "";
  const int version = call("reload_plugin_version", error, sizeof error);
  if (report_missing && call("reload_no_such_symbol", error, sizeof error) == -1) printf("missing: %s\n", error);
  dlclose(plugin);
  dlclose(host);
  return version;
}

int main(int argc, char** argv) {
  if (argc != 5) return 2;
  char path[4096];
  snprintf(path, sizeof path, "%s/libreload_plugin.so", argv[4]);
  if (copy_file(argv[2], path) != 0) return 3;
  printf("first: version %d\n", load_and_call(argv[1], path, 1));
  void* still = dlopen(path, RTLD_NOW | RTLD_NOLOAD);
  printf("plugin unloaded: %s\n", still == NULL ? "yes" : "no");
  if (still != NULL) dlclose(still);
  if (copy_file(argv[3], path) != 0) return 3;
  printf("after reload: version %d\n", load_and_call(argv[1], path, 0));
  return 0;
}
