/* dlsym and dlvsym as the process sees them with libjitcache-preload.so loaded.
 *
 * A lookup the shim has nothing to say about (RTLD_NEXT, or a name that is not hooked: nearly all)
 * is a jump into the next dlsym/dlvsym in the search order (another interposer's, else libc's)
 * with the caller's return address still on the stack. Rationale: glibc's dlsym reads its caller's
 * return address: RTLD_NEXT means "after the caller's object", an RTLD_DEFAULT lookup searches the
 * caller's scope and records that the caller depends on the object that defines the symbol (so a
 * plugin is unloaded only when nothing that looked into it remains), and a failed lookup's dlerror()
 * names the caller's object. A lookup made by the shim would change all three for the program.
 *
 * A hooked name (the driver's, cudart's or nvJitLink's: shim_names.h) is answered as it would be
 * without the shim, with the shim's stub standing in for the real function:
 *   RTLD_DEFAULT: a definition before the shim's (the program's own, an earlier interposer's) as
 *     found; else the next definition after the shim or in the caller's own scope (a library opened
 *     with RTLD_LOCAL that links the driver); none: NULL and an "undefined symbol" error, as if the
 *     shim were not there (a process that never loaded the driver finds no driver function).
 *   a handle: the lookup through the next dlsym; when it found the shim's own export (the
 *     program's handle, whose scope holds the preloads) the definition after it; then the core
 *     decides whether the answer is a function it caches (shim_interface.h route).
 * With JITCACHE_DISABLE the real answer is handed out, never a stub.
 * Thread safety: lock-free (shim_libc.h, shim_names.h). */
#include <dlfcn.h>
#include <stddef.h>

#include <client/src/preload_shim/shim_core.h>
#include <client/src/preload_shim/shim_disable.h>
#include <client/src/preload_shim/shim_libc.h>
#include <client/src/preload_shim/shim_names.h>

#if !defined(__x86_64__)
#error "the preload shim's dlsym and dlvsym are x86-64 assembly"
#endif

static void* lookup_in(void* handle, const char* name, const char* version) {
  return version != NULL ? jitcache_shim_libc_dlvsym()(handle, name, version)
                         : jitcache_shim_libc_dlsym()(handle, name);
}

/* A handle of the object holding `caller`, when that object is not the shim: its own scope (itself
 * and what it links) is where its failed lookups are reported. Only held while the object stays
 * loaded anyway (RTLD_NOLOAD of code that is running), so the reference is dropped at once. */
static void* caller_object(const void* caller) {
  Dl_info info;
  if (caller == NULL || jitcache_shim_contains(caller) || dladdr(caller, &info) == 0 || info.dli_fname == NULL ||
      info.dli_fname[0] == '\0') {
    return NULL;
  }
  void* object = dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
  if (object != NULL) dlclose(object);
  return object;
}

/* The definition a lookup would find without the shim: the next one after it, else one in the
 * caller's own scope. */
static void* real_definition(const char* name, const char* version, const void* caller) {
  void* next = version != NULL ? jitcache_shim_next_versioned(name, version) : jitcache_shim_next_definition(name);
  if (next != NULL && !jitcache_shim_contains(next)) return next;
  void* object = caller_object(caller);
  if (object == NULL) return NULL;
  void* found = lookup_in(object, name, version);
  return found != NULL && !jitcache_shim_contains(found) ? found : NULL;
}

/* Leaves dlerror() saying that `name` is undefined, through a failed lookup in the caller's own
 * object ("<caller>: undefined symbol: <name>", glibc's words for the failed lookup without us).
 * The main program's scope holds the shim, so its failure is reported through libc's object. */
static void fail_as_undefined(const char* name, const char* version, const void* caller) {
  void* object = caller_object(caller);
  if (object != NULL && lookup_in(object, name, version) == NULL) return;
  void* libc = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);
  if (libc == NULL) return;
  dlclose(libc);
  (void)lookup_in(libc, name, version);
}

static void* default_lookup(int index, const char* name, const char* version, const void* caller) {
  void* first = lookup_in(RTLD_DEFAULT, name, version);
  if (first != NULL && !jitcache_shim_contains(first)) return jitcache_shim_found(first);
  void* real = real_definition(name, version, caller);
  if (real == NULL) {
    fail_as_undefined(name, version, caller);
    return NULL;
  }
  return jitcache_shim_found(jitcache_shim_disabled() ? real : jitcache_shim_stubs[index]);
}

static void* handle_lookup(int index, void* handle, const char* name, const char* version, const void* caller) {
  void* found =
      version != NULL ? jitcache_shim_next_dlvsym()(handle, name, version) : jitcache_shim_next_dlsym()(handle, name);
  if (found == NULL) return NULL; /* the real lookup's failure, in its words */
  if (jitcache_shim_contains(found)) {
    void* real = real_definition(name, version, caller);
    if (real == NULL) {
      fail_as_undefined(name, version, caller);
      return NULL;
    }
    return jitcache_shim_found(jitcache_shim_disabled() ? real : jitcache_shim_stubs[index]);
  }
  if (jitcache_shim_disabled()) return found;
  const struct jitcache_core* core = jitcache_shim_core();
  return jitcache_shim_found(core != NULL ? core->route(name, found, caller) : found);
}

/* Entered by a jump from the trampolines below, so the return address is the program's. */
__attribute__((noinline, used, visibility("hidden"))) void* jitcache_shim_dlsym_hooked(void* handle, const char* name,
                                                                                       int index) {
  const void* caller = __builtin_return_address(0);
  if (handle == RTLD_DEFAULT) return default_lookup(index, name, NULL, caller);
  return handle_lookup(index, handle, name, NULL, caller);
}

__attribute__((noinline, used, visibility("hidden"))) void* jitcache_shim_dlvsym_hooked(void* handle, const char* name,
                                                                                        const char* version,
                                                                                        int index) {
  const void* caller = __builtin_return_address(0);
  if (handle == RTLD_DEFAULT) return default_lookup(index, name, version, caller);
  return handle_lookup(index, handle, name, version, caller);
}

/* The next dlsym/dlvsym for the jumps, found on the first lookup (an atomic slot that first holds
 * a thunk calling these). */
__attribute__((used, visibility("hidden"))) void* jitcache_shim_resolve_next_dlsym(void) {
  void* fn = (void*)jitcache_shim_next_dlsym();
  extern void* jitcache_shim_dlsym_next __attribute__((visibility("hidden")));
  __atomic_store_n(&jitcache_shim_dlsym_next, fn, __ATOMIC_RELEASE);
  return fn;
}
__attribute__((used, visibility("hidden"))) void* jitcache_shim_resolve_next_dlvsym(void) {
  void* fn = (void*)jitcache_shim_next_dlvsym();
  extern void* jitcache_shim_dlvsym_next __attribute__((visibility("hidden")));
  __atomic_store_n(&jitcache_shim_dlvsym_next, fn, __ATOMIC_RELEASE);
  return fn;
}

/* RTLD_NEXT is ((void*)-1). A name that does not begin as a hooked name does (cuModuleLo...,
 * cuLi..., cuGetPr..., cudaGetDr..., nv..., __...) is turned away here, byte by byte (a byte is
 * read only after the one before it matched, so never past the name's end), without a call; the
 * others are looked up in the hooked names (saving the argument registers, the stack kept 16-byte
 * aligned at the call). The index found goes to the hook as its last argument. */
/* The filter both resolvers start with: a NULL name or RTLD_NEXT, and every name that cannot be a
 * hooked one, jump to 1: (the next resolver); a name that may be hooked goes on at 2:. Emitted once
 * per resolver, so its local labels are that resolver's. */
#define JITCACHE_SHIM_NAME_FILTER                                                                    \
  "  testq %rsi, %rsi\n"                                                                             \
  "  jz 1f\n"                                                                                        \
  "  cmpq $-1, %rdi\n"                                                                               \
  "  je 1f\n"                                                                                        \
  "  movzbl (%rsi), %eax\n" /* byte by byte: a byte is read only when the one before it is no NUL */ \
  "  cmpb $0x63, %al\n"     /* 'c' */                                                                \
  "  je 4f\n"                                                                                        \
  "  cmpb $0x6e, %al\n" /* 'n' */                                                                    \
  "  je 5f\n"                                                                                        \
  "  cmpb $0x5f, %al\n" /* '_' */                                                                    \
  "  je 6f\n"                                                                                        \
  "  jmp 1f\n"                                                                                       \
  "4:\n"                                                                                             \
  "  cmpb $0x75, 1(%rsi)\n" /* "cu", then the rest of a hooked name's start, byte by byte */         \
  "  jne 1f\n"                                                                                       \
  "  movzbl 2(%rsi), %eax\n"                                                                         \
  "  cmpb $0x4d, %al\n" /* cuModuleLoad */                                                           \
  "  je 7f\n"                                                                                        \
  "  cmpb $0x4c, %al\n" /* cuLibrary, cuLink */                                                      \
  "  je 8f\n"                                                                                        \
  "  cmpb $0x47, %al\n" /* cuGetProcAddress */                                                       \
  "  je 9f\n"                                                                                        \
  "  cmpb $0x64, %al\n" /* cudaGetDriverEntryPoint */                                                \
  "  jne 1f\n"                                                                                       \
  "  cmpb $0x61, 3(%rsi)\n"                                                                          \
  "  jne 1f\n"                                                                                       \
  "  cmpb $0x47, 4(%rsi)\n"                                                                          \
  "  jne 1f\n"                                                                                       \
  "  cmpb $0x65, 5(%rsi)\n"                                                                          \
  "  jne 1f\n"                                                                                       \
  "  cmpb $0x74, 6(%rsi)\n"                                                                          \
  "  jne 1f\n"                                                                                       \
  "  cmpb $0x44, 7(%rsi)\n"                                                                          \
  "  jne 1f\n"                                                                                       \
  "  cmpb $0x72, 8(%rsi)\n"                                                                          \
  "  jne 1f\n"                                                                                       \
  "  jmp 2f\n"                                                                                       \
  "7:\n"                                                                                             \
  "  cmpb $0x6f, 3(%rsi)\n"                                                                          \
  "  jne 1f\n"                                                                                       \
  "  cmpb $0x64, 4(%rsi)\n"                                                                          \
  "  jne 1f\n"                                                                                       \
  "  cmpb $0x75, 5(%rsi)\n"                                                                          \
  "  jne 1f\n"                                                                                       \
  "  cmpb $0x6c, 6(%rsi)\n"                                                                          \
  "  jne 1f\n"                                                                                       \
  "  cmpb $0x65, 7(%rsi)\n"                                                                          \
  "  jne 1f\n"                                                                                       \
  "  cmpb $0x4c, 8(%rsi)\n"                                                                          \
  "  jne 1f\n"                                                                                       \
  "  cmpb $0x6f, 9(%rsi)\n"                                                                          \
  "  jne 1f\n"                                                                                       \
  "  jmp 2f\n"                                                                                       \
  "8:\n"                                                                                             \
  "  cmpb $0x69, 3(%rsi)\n"                                                                          \
  "  je 2f\n"                                                                                        \
  "  jmp 1f\n"                                                                                       \
  "9:\n"                                                                                             \
  "  cmpb $0x65, 3(%rsi)\n"                                                                          \
  "  jne 1f\n"                                                                                       \
  "  cmpb $0x74, 4(%rsi)\n"                                                                          \
  "  jne 1f\n"                                                                                       \
  "  cmpb $0x50, 5(%rsi)\n"                                                                          \
  "  jne 1f\n"                                                                                       \
  "  cmpb $0x72, 6(%rsi)\n"                                                                          \
  "  jne 1f\n"                                                                                       \
  "  jmp 2f\n"                                                                                       \
  "5:\n"                                                                                             \
  "  cmpb $0x76, 1(%rsi)\n" /* "nv" */                                                               \
  "  je 2f\n"                                                                                        \
  "  jmp 1f\n"                                                                                       \
  "6:\n"                                                                                             \
  "  cmpb $0x5f, 1(%rsi)\n" /* "__" */                                                               \
  "  je 2f\n"                                                                                        \
  "1:\n"

__asm__(
    "  .pushsection .text\n"
    "  .globl dlsym\n"
    "  .type dlsym, @function\n"
    "  .p2align 4\n"
    "dlsym:\n" JITCACHE_SHIM_NAME_FILTER
    "  jmpq *jitcache_shim_dlsym_next(%rip)\n"
    "2:\n"
    "  pushq %rdi\n"
    "  pushq %rsi\n"
    "  subq $8, %rsp\n"
    "  movq %rsi, %rdi\n"
    "  call jitcache_shim_hooked_index\n"
    "  addq $8, %rsp\n"
    "  popq %rsi\n"
    "  popq %rdi\n"
    "  testl %eax, %eax\n"
    "  js 1b\n"
    "  movl %eax, %edx\n"
    "  jmp jitcache_shim_dlsym_hooked\n"
    "  .size dlsym, .-dlsym\n"
    "\n"
    "  .globl dlvsym\n"
    "  .type dlvsym, @function\n"
    "  .p2align 4\n"
    "dlvsym:\n" JITCACHE_SHIM_NAME_FILTER
    "  jmpq *jitcache_shim_dlvsym_next(%rip)\n"
    "2:\n"
    "  pushq %rdi\n"
    "  pushq %rsi\n"
    "  pushq %rdx\n"
    "  movq %rsi, %rdi\n"
    "  call jitcache_shim_hooked_index\n"
    "  popq %rdx\n"
    "  popq %rsi\n"
    "  popq %rdi\n"
    "  testl %eax, %eax\n"
    "  js 1b\n"
    "  movl %eax, %ecx\n"
    "  jmp jitcache_shim_dlvsym_hooked\n"
    "  .size dlvsym, .-dlvsym\n"
    "\n"
    "jitcache_shim_first_dlsym:\n"
    "  pushq %rdi\n"
    "  pushq %rsi\n"
    "  subq $8, %rsp\n"
    "  call jitcache_shim_resolve_next_dlsym\n"
    "  addq $8, %rsp\n"
    "  popq %rsi\n"
    "  popq %rdi\n"
    "  jmpq *%rax\n"
    "jitcache_shim_first_dlvsym:\n"
    "  pushq %rdi\n"
    "  pushq %rsi\n"
    "  pushq %rdx\n"
    "  call jitcache_shim_resolve_next_dlvsym\n"
    "  popq %rdx\n"
    "  popq %rsi\n"
    "  popq %rdi\n"
    "  jmpq *%rax\n"
    "  .popsection\n"
    "  .pushsection .data.rel.local, \"aw\"\n"
    "  .p2align 3\n"
    "  .globl jitcache_shim_dlsym_next\n"
    "  .hidden jitcache_shim_dlsym_next\n"
    "jitcache_shim_dlsym_next:\n"
    "  .quad jitcache_shim_first_dlsym\n"
    "  .globl jitcache_shim_dlvsym_next\n"
    "  .hidden jitcache_shim_dlvsym_next\n"
    "jitcache_shim_dlvsym_next:\n"
    "  .quad jitcache_shim_first_dlvsym\n"
    "  .popsection\n");
