// One entry point libjitcache-preload.so stands in for (docs/transparent.md "How calls are caught").
//
// A Hook names one exported ABI symbol of one library ("cuLinkCreate_v2" of libcuda,
// "__nvJitLinkCreate_13_0" of libnvJitLink), the core's function that replaces it, and the slot that
// holds the real function it calls. Every route a program can take to the symbol ends at the shim's
// stub for it (client/src/preload_shim/hooked_names.h), which jumps to that function: direct binding
// (the shim exports `symbol`), dlsym/dlvsym on the library's handle, and, for the driver,
// cuGetProcAddress{,_v2} and cudaGetDriverEntryPoint{,ByVersion} asked
// for `base` at an API version from `min_version` on (the newest ABI whose min_version is at most
// the version asked for is the one handed out, as cudaTypedefs.h's PFN_*_vNNNN describe them).
//
// The real function is the next definition after the shim, else found in the real library, never
// through the hooks (real_symbols.hpp). Thread safety: the table is constant; a slot is an atomic written once with
// the one address the library has for the symbol (racing writers store the same value), so
// wrappers read it without locks and nothing is held across fork().
#pragma once

#include <array>
#include <atomic>
#include <span>

namespace jitcache::client::preload {

enum class HookedLibrary { cuda, nvjitlink, nvrtc };

struct Hook {
  const char* symbol;  // the exported ABI name: "cuModuleLoadDataEx", "cuLinkCreate_v2"
  const char* base;    // what cuGetProcAddress is asked for ("cuLinkCreate"); nullptr: not reachable so
  int min_version;     // the API version from which cuGetProcAddress returns this ABI for `base`
  HookedLibrary library;
  void* wrapper;             // the core's function; programs are handed the shim's stub, which jumps here
  std::atomic<void*>* real;  // the real function, resolved on first use (real_function below)
};

// Every hook of the library, area by area (module_hooks.cpp, library_hooks.cpp, link_hooks.cpp,
// nvjitlink_hooks.cpp, nvrtc_hooks.cpp, proc_address_hooks.cpp). Rationale: the tables are constant arrays, each
// initialised before any code runs (no constructor, no lock), and joined here without copying, so a
// hook works even when another library's constructor calls dlsym before this library's ran.
std::array<std::span<const Hook>, 6> hook_tables();

// The per-area tables. Each area's file defines its own.
std::span<const Hook> module_hooks();
std::span<const Hook> library_hooks();
std::span<const Hook> link_hooks();
std::span<const Hook> nvjitlink_hooks();
std::span<const Hook> nvrtc_hooks();
std::span<const Hook> proc_address_hooks();

}  // namespace jitcache::client::preload
