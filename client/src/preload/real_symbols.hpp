// The real functions behind the hooks: libc's own dlsym/dlvsym, the driver's handle, and the real
// address of each hooked symbol.
//
// Rationale: the shim exports dlsym and dlvsym, so a call to either from anywhere in the process,
// this core's own code included, reaches the shim. The real ones are therefore the shim's view of
// libc's, found without a name lookup (client/src/preload_shim/shim_libc.h). Nothing here takes a
// lock.
// Thread safety: every function may be called from any thread, also before main and in a child
// after fork().
#pragma once

#include <client/src/preload/hook.hpp>

namespace jitcache::client::preload {

void* real_dlsym(void* handle, const char* name);
void* real_dlvsym(void* handle, const char* name, const char* version);

// The driver the program uses: the libcuda.so.1 already loaded, else the one the client would open
// (driver::default_driver_path()); nullptr when there is none.
void* cuda_library();

// The real function of `hook`: its slot, else the next definition after the shim in the search
// order (another interposer's, or the library's), else for HookedLibrary::cuda the definition in
// the driver's handle (a driver opened with RTLD_LOCAL), and kept.
// nullptr when the library has no such symbol.
void* resolve_real(const Hook& hook);
template <class Fn>
Fn real_function(const Hook& hook) {
  return reinterpret_cast<Fn>(resolve_real(hook));
}
// Records `address` as the real function of `hook` when its slot is empty (an nvJitLink the program
// opened itself, seen through dlsym). Returns whether the slot now holds `address`.
bool adopt_real(const Hook& hook, void* address);

// True when `address` (a return address) lies in this core: its own calls get real answers.
bool inside_preload(const void* address);
// True when `address` lies in libjitcache.so, loaded beside this library by a program that links
// it: its loads are cached already, so it too gets the real driver (no second cache in front).
bool inside_libjitcache(const void* address);

}  // namespace jitcache::client::preload
