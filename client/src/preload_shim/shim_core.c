#include <client/src/preload_shim/shim_core.h>

#include <dlfcn.h>
#include <stddef.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <client/src/preload_shim/shim_disable.h>
#include <client/src/preload_shim/shim_libc.h>
#include <client/src/preload_shim/shim_names.h>

static void* next_dlsym(void* handle, const char* name) { return jitcache_shim_next_dlsym()(handle, name); }
static void* next_dlvsym(void* handle, const char* name, const char* version) {
  return jitcache_shim_next_dlvsym()(handle, name, version);
}
static void* libc_dlsym(void* handle, const char* name) { return jitcache_shim_libc_dlsym()(handle, name); }
static void* libc_dlvsym(void* handle, const char* name, const char* version) {
  return jitcache_shim_libc_dlvsym()(handle, name, version);
}

/* Rationale: one fstat at start (well under a microsecond) is the only work the shim does in a
 * process that never touches CUDA; without it the core, loaded later, could only record whatever
 * fd 2 has become by then. */
static int g_stderr_open;
static unsigned long long g_stderr_device;
static unsigned long long g_stderr_inode;

__attribute__((constructor)) static void record_program_stderr(void) {
  struct stat st;
  if (fstat(STDERR_FILENO, &st) != 0) return;
  g_stderr_device = (unsigned long long)st.st_dev;
  g_stderr_inode = (unsigned long long)st.st_ino;
  g_stderr_open = 1;
}

static int program_stderr(unsigned long long* device, unsigned long long* inode) {
  if (!g_stderr_open) return 0;
  *device = g_stderr_device;
  *inode = g_stderr_inode;
  return 1;
}

static const struct jitcache_shim k_shim = {
    JITCACHE_SHIM_INTERFACE_VERSION,
    JITCACHE_HOOKED_NAME_COUNT,
    jitcache_shim_names,
    jitcache_shim_stubs,
    jitcache_shim_next_definition,
    next_dlsym,
    next_dlvsym,
    libc_dlsym,
    libc_dlvsym,
    jitcache_shim_disabled,
    program_stderr,
};

/* 0 not tried, 1 attached, 2 cannot be loaded */
static int g_state;
static const struct jitcache_core* g_core;

/* The core's path: the shim's directory and JITCACHE_CORE_FILE, so an installed pair (and the
 * build tree's) always match. */
static int core_path(char* path, size_t size) {
  Dl_info self;
  if (dladdr((const void*)&core_path, &self) == 0 || self.dli_fname == NULL) return 0;
  const char* slash = strrchr(self.dli_fname, '/');
  const size_t directory = slash != NULL ? (size_t)(slash - self.dli_fname) + 1 : 0;
  if (directory + sizeof(JITCACHE_CORE_FILE) > size) return 0;
  memcpy(path, self.dli_fname, directory);
  memcpy(path + directory, JITCACHE_CORE_FILE, sizeof(JITCACHE_CORE_FILE));
  return 1;
}

static const struct jitcache_core* attach(void) {
  char path[4096];
  if (!core_path(path, sizeof path)) return NULL;
  /* RTLD_LOCAL: nothing of the core (its copies of libstdc++'s users, its C API) joins the
   * program's global scope. */
  void* core = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (core == NULL) {
    (void)dlerror();
    return NULL;
  }
  jitcache_core_attach_fn attach_core = (jitcache_core_attach_fn)libc_dlsym(core, JITCACHE_CORE_ATTACH);
  if (attach_core == NULL) {
    (void)dlerror();
    return NULL;
  }
  return attach_core(&k_shim);
}

const struct jitcache_core* jitcache_shim_core(void) {
  const int state = __atomic_load_n(&g_state, __ATOMIC_ACQUIRE);
  if (state == 1) return __atomic_load_n(&g_core, __ATOMIC_ACQUIRE);
  if (state == 2) return NULL;
  const struct jitcache_core* core = attach();
  if (core != NULL) __atomic_store_n(&g_core, core, __ATOMIC_RELEASE);
  __atomic_store_n(&g_state, core != NULL ? 1 : 2, __ATOMIC_RELEASE);
  return core;
}
