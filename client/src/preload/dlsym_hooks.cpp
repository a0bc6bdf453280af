// dlsym and dlvsym as the process sees them with libjitcache-preload.so loaded: the real lookup
// first, then symbol_routes.hpp's substitution, so that a program (cudart, PyTorch, cuda-python)
// that opens libcuda or libnvJitLink and looks an entry point up by name gets the cached one.
//
// Rationale: glibc's dlsym reads its caller's return address: RTLD_NEXT means "the objects after
// the caller's". A hook that called the real dlsym would make that "after this library", which
// skips or repeats objects for the caller (another interposer looking up its next definition could
// find itself and recurse). So on x86-64 the exported names are trampolines: RTLD_NEXT jumps
// straight into the real function with the caller's return address still on the stack (and is
// never substituted); any other handle jumps into the C++ hook, which therefore also sees the
// caller's return address and hands this library's own lookups (the client opening the driver),
// and libjitcache.so's when a program links it too, the real answer. Elsewhere the hooks are plain functions and
// RTLD_NEXT lookups through them are relative to this library (docs/transparent.md "What is not caught"). Thread
// safety: lock-free (real_symbols.hpp, symbol_routes.hpp).
#include <dlfcn.h>

#include <client/src/preload/real_symbols.hpp>
#include <client/src/preload/symbol_routes.hpp>

using jitcache::client::preload::inside_libjitcache;
using jitcache::client::preload::inside_preload;
using jitcache::client::preload::own_resolver;
using jitcache::client::preload::real_dlsym;
using jitcache::client::preload::real_dlsym_address;
using jitcache::client::preload::real_dlvsym;
using jitcache::client::preload::real_dlvsym_address;
using jitcache::client::preload::route_symbol;

namespace {

// Rationale: finding a real function may take a failed lookup of our own (RTLD_NEXT, an RTLD_NOLOAD
// probe), which leaves an error for dlerror(). A program that clears dlerror(), calls dlsym and then
// asks dlerror() (the idiom for symbols whose value may be NULL) must not see it: an answer found
// is handed out with the error state clear, as glibc's own successful dlsym leaves it. A failed
// lookup never reaches our own lookups, so its error is the real one.
void* succeeded(void* answer) {
  if (answer != nullptr) (void)::dlerror();
  return answer;
}

}  // namespace

extern "C" {

// The hooks proper; on x86-64 entered by a jump from the trampolines below, so that the return
// address is the program's.
__attribute__((noinline, used, visibility("hidden"))) void* jitcache_preload_dlsym(void* handle, const char* name) {
  const void* caller = __builtin_return_address(0);
  void* found = real_dlsym(handle, name);
  if (inside_preload(caller)) return own_resolver(name, found);
  // Rationale: dladdr takes the loader's lock and walks every loaded object, so it runs only when
  // the answer would be a wrapper (a hooked function), not for each of the many other lookups.
  void* routed = route_symbol(name, found);
  if (routed != found && inside_libjitcache(caller)) routed = own_resolver(name, found);
  return succeeded(routed);
}

__attribute__((noinline, used, visibility("hidden"))) void* jitcache_preload_dlvsym(void* handle, const char* name,
                                                                                    const char* version) {
  const void* caller = __builtin_return_address(0);
  void* found = real_dlvsym(handle, name, version);
  if (inside_preload(caller)) return own_resolver(name, found);
  void* routed = route_symbol(name, found);
  if (routed != found && inside_libjitcache(caller)) routed = own_resolver(name, found);
  return succeeded(routed);
}

namespace {
void* find_nothing(void*, const char*, const char*) { return nullptr; }
}  // namespace

// The real functions for the RTLD_NEXT jumps, never null (a stand-in that finds nothing when
// libc's could not be found, so the jump cannot go to address 0).
__attribute__((used, visibility("hidden"))) void* jitcache_preload_next_dlsym() {
  void* fn = real_dlsym_address();
  return fn != nullptr ? fn : reinterpret_cast<void*>(&find_nothing);
}
__attribute__((used, visibility("hidden"))) void* jitcache_preload_next_dlvsym() {
  void* fn = real_dlvsym_address();
  return fn != nullptr ? fn : reinterpret_cast<void*>(&find_nothing);
}

}  // extern "C"

#if defined(__x86_64__)
// RTLD_NEXT is ((void*)-1). The argument registers are saved around the call that finds the real
// function (with the stack kept 16-byte aligned), then restored, and the jump leaves the stack as
// the caller made it.
__asm__(R"(
  .text
  .globl dlsym
  .type dlsym, @function
dlsym:
  cmpq $-1, %rdi
  jne jitcache_preload_dlsym
  pushq %rdi
  pushq %rsi
  subq $8, %rsp
  call jitcache_preload_next_dlsym
  addq $8, %rsp
  popq %rsi
  popq %rdi
  jmp *%rax
  .size dlsym, .-dlsym

  .globl dlvsym
  .type dlvsym, @function
dlvsym:
  cmpq $-1, %rdi
  jne jitcache_preload_dlvsym
  pushq %rdi
  pushq %rsi
  pushq %rdx
  call jitcache_preload_next_dlvsym
  popq %rdx
  popq %rsi
  popq %rdi
  jmp *%rax
  .size dlvsym, .-dlvsym
)");
#else
extern "C" {
__attribute__((visibility("default"))) void* dlsym(void* handle, const char* name) {
  return jitcache_preload_dlsym(handle, name);
}
__attribute__((visibility("default"))) void* dlvsym(void* handle, const char* name, const char* version) {
  return jitcache_preload_dlvsym(handle, name, version);
}
}
#endif
