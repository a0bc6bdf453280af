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
  return kind == JITCACHE_KIND_CUDA || kind == JITCACHE_KIND_NVJITLINK || kind == JITCACHE_KIND_CUDART;
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

/* Every hooked library name starts "cu", "nvJitLink" or "__nvJitLink". */
static int may_be_hooked(const char* name) {
  if (name[0] == 'c') return name[1] == 'u';
  if (name[0] == 'n') return name[1] == 'v';
  if (name[0] == '_') return name[1] == '_' && name[2] == 'n';
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
