#include <client/src/preload_shim/shim_disable.h>

#include <stdlib.h>

/* ASCII only: the locale may not be set up yet (this runs before main) and must not matter. */
static int same_word(const char* value, const char* word) {
  for (; *value != '\0' && *word != '\0'; ++value, ++word) {
    char c = *value;
    if (c >= 'A' && c <= 'Z') c = (char)(c - 'A' + 'a');
    if (c != *word) return 0;
  }
  return *value == '\0' && *word == '\0';
}

int jitcache_shim_disable_value(const char* value) {
  if (value == NULL || *value == '\0') return 0;
  static const char* const k_off[] = {"0", "false", "no", "off"};
  for (unsigned i = 0; i < sizeof k_off / sizeof k_off[0]; ++i) {
    if (same_word(value, k_off[i])) return 0;
  }
  return 1; /* "1", "true", "yes", "on", and anything unrecognised */
}

int jitcache_shim_disabled(void) {
  /* 0 unknown, 1 enabled, 2 disabled */
  static int state;
  int known = __atomic_load_n(&state, __ATOMIC_RELAXED);
  if (known == 0) {
    known = jitcache_shim_disable_value(getenv("JITCACHE_DISABLE")) ? 2 : 1;
    __atomic_store_n(&state, known, __ATOMIC_RELAXED);
  }
  return known == 2;
}
