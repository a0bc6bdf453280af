/* JITCACHE_DISABLE as the shim reads it: every hook is then the real function and the core is
 * never loaded. The rule is the client's (docs/configuration.md): case-insensitive "1", "true",
 * "yes", "on", and any other non-empty value, disable; "0", "false", "no", "off" and "" (or unset)
 * do not. Rationale: a value nobody recognises is more likely a request to switch off than to keep
 * a cache the user is trying to get rid of.
 * Thread safety: read once per process, lock-free; racing first readers compute the same answer. */
#ifndef JITCACHE_PRELOAD_SHIM_SHIM_DISABLE_H
#define JITCACHE_PRELOAD_SHIM_SHIM_DISABLE_H

/* 1 when `value` (NULL: unset) disables, 0 when it does not. */
int jitcache_shim_disable_value(const char* value);
/* The process's answer: JITCACHE_DISABLE read on first use. */
int jitcache_shim_disabled(void);

#endif
