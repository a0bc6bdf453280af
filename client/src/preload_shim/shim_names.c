#include <client/src/preload_shim/shim_names.h>

#include <stdint.h>
#include <string.h>

/* A power of two over twice the names, so probes stay short. */
enum { k_slots = 512 };
_Static_assert(JITCACHE_HOOKED_NAME_COUNT * 2 < k_slots, "the hash table must stay sparse");

static uint16_t g_table[k_slots]; /* index + 1, 0 empty */
static int g_ready;

/* FNV-1a over the name; also returns its length through `length`. */
static uint32_t hash_of(const char* name) {
  uint32_t hash = 2166136261u;
  for (; *name != '\0'; ++name) hash = (hash ^ (unsigned char)*name) * 16777619u;
  return hash;
}

static int is_library_name(int index) {
  const unsigned kind = jitcache_shim_kinds[index];
  return kind == JITCACHE_KIND_CUDA || kind == JITCACHE_KIND_NVJITLINK || kind == JITCACHE_KIND_CUDART ||
         kind == JITCACHE_KIND_NVRTC;
}

static void build_table(void) {
  for (int i = 0; i < JITCACHE_HOOKED_NAME_COUNT; ++i) {
    if (!is_library_name(i)) continue;
    uint32_t slot = hash_of(jitcache_shim_names[i]) & (k_slots - 1);
    while (__atomic_load_n(&g_table[slot], __ATOMIC_RELAXED) != 0 &&
           __atomic_load_n(&g_table[slot], __ATOMIC_RELAXED) != (uint16_t)(i + 1)) {
      slot = (slot + 1) & (k_slots - 1);
    }
    __atomic_store_n(&g_table[slot], (uint16_t)(i + 1), __ATOMIC_RELAXED);
  }
  __atomic_store_n(&g_ready, 1, __ATOMIC_RELEASE);
}

/* Whether `name` begins as a hooked library name does: cuModuleLoad*, cuLibrary*, cuLink*,
 * cuGetProcAddress*, cudaGetDriverEntryPoint*, nvJitLink*, __nvJitLink*, nvrtc*. Rationale: cudart and the
 * frameworks look up hundreds of cu* names that are not hooked (cuDeviceGetAttribute,
 * cuModuleGetFunction, cuLaunchKernel); a few byte compares turn nearly all of them away before the
 * whole name is hashed (docs/benchmarks.md "Start-up cost"). */
static int starts_with(const char* name, const char* prefix) {
  for (; *prefix != '\0'; ++name, ++prefix) {
    if (*name != *prefix) return 0;
  }
  return 1;
}

/* starts_with for a prefix of 8 characters or more, comparing the first 8 in one load where the
 * 8 bytes at `name` lie in one page (a read past the name's end then stays in memory that is
 * mapped; the sanitizer is told so). */
__attribute__((no_sanitize_address)) static int starts_with_long(const char* name, const char* prefix) {
  if (((uintptr_t)name & 4095u) <= 4096u - 8u) {
    uint64_t have;
    uint64_t want;
    __builtin_memcpy(&have, name, 8);
    __builtin_memcpy(&want, prefix, 8);
    return have == want && starts_with(name + 8, prefix + 8);
  }
  return starts_with(name, prefix);
}

static int may_be_hooked(const char* name) {
  if (name[0] == 'c') {
    if (name[1] != 'u') return 0;
    switch (name[2]) {
      case 'M': return starts_with_long(name + 3, "oduleLoad");
      case 'L': return starts_with(name + 3, "ibrary") || starts_with(name + 3, "ink");
      case 'G': return starts_with_long(name + 3, "etProcAddress");
      case 'd': return starts_with_long(name + 3, "aGetDriverEntryPoint");
      default: return 0;
    }
  }
  /* nvJitLink's hooked functions are Create, Destroy, AddData, AddFile, Complete and Get*: not
   * nvJitLinkVersion, which every user of nvJitLink asks for. */
  /* NVRTC's hooked functions are the program's lifecycle: not nvrtcVersion or nvrtcGetErrorString. */
  if (name[0] == 'n') {
    if (name[1] == 'v' && name[2] == 'r') return starts_with(name + 3, "tc") && name[5] != 'V';
    return starts_with_long(name + 1, "vJitLink") && name[9] != 'V';
  }
  if (name[0] == '_') return starts_with_long(name + 1, "_nvJitLink") && name[11] != 'V';
  return 0;
}

int jitcache_shim_hooked_index(const char* name) {
  if (name == NULL || !may_be_hooked(name)) return -1;
  if (!__atomic_load_n(&g_ready, __ATOMIC_ACQUIRE)) build_table();
  uint32_t slot = hash_of(name) & (k_slots - 1);
  for (;;) {
    const unsigned entry = __atomic_load_n(&g_table[slot], __ATOMIC_RELAXED);
    if (entry == 0) return -1;
    if (strcmp(jitcache_shim_names[entry - 1], name) == 0) return (int)entry - 1;
    slot = (slot + 1) & (k_slots - 1);
  }
}
