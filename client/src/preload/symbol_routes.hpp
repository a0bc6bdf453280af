// What a program is handed when it asks for a hooked function by name (docs/transparent.md "How
// calls are caught"): the real resolver answers first, and its answer is replaced by a wrapper
// only when it succeeded and is the real function of a hooked ABI symbol.
//
//   dlsym/dlvsym "cuLinkCreate_v2" → the shim's stub of the hook whose symbol is that name, when the
//     address found is the real one or the driver's own (an nvJitLink the program opened itself is adopted:
//     real_symbols.hpp)
//   cuGetProcAddress("cuLinkCreate", version) → among the hooks of that base name, the one whose
//     real function is the address the driver returned (the ABI the driver chose for the version
//     asked); when the driver's address is none of them, the hook whose min_version is the newest
//     at most `version`, if its real function is still unknown (it adopts the address); else the
//     driver's answer unchanged — never a wrapper of another ABI than the one asked for.
//
// JITCACHE_DISABLE (read once per process, by the shim) turns every route into the real answer.
// Thread safety: lock-free; may be called from any thread, before main and after fork().
#pragma once

namespace jitcache::client::preload {

void* route_symbol(const char* symbol, void* found);
void* route_proc_address(const char* base, void* found, int version);

// The real function behind `pfn` when it is one of the wrappers, else `pfn` (nullptr when the
// wrapper's real function cannot be found). Rationale: a driver built without -Bsymbolic (the test
// suite's fake is one) hands out its own exported names' addresses, which the preload library
// interposes; the library's own driver calls must still reach the driver.
void* unwrap(void* pfn);

// Resolvers for this core's own use (core_attach.cpp's route hands them to the client when it asks
// for "cuGetProcAddress_v2" or "cuGetProcAddress"): the real resolver with every answer unwrapped.
void* own_resolver(const char* symbol, void* found);

// JITCACHE_DISABLE, as the shim read it (client/src/preload_shim/shim_disable.h): every hook is the
// real function.
bool preload_disabled();

}  // namespace jitcache::client::preload
