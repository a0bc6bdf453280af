/* The shim's exported functions: one stub per name of hooked_names.h, bound lazily, as the dynamic
 * loader binds a PLT entry. Each stub is one indirect jump through its slot; a slot first holds a
 * thunk that saves the argument registers, asks jitcache_shim_bind for the function (the core's,
 * or the real one when the cache is disabled or cannot be loaded), stores it in the slot and jumps.
 *
 * Rationale: the jump leaves the caller's stack and registers as they were, so the function reached
 * sees the program's own return address (the core's hooks tell the library's own calls from the
 * program's by it) and gets its arguments without the shim knowing a single signature; after the
 * first call a hooked function costs one indirect jump, and a disabled one jumps straight to the
 * real function. x86-64 only, as the trampolines of shim_dlsym.c.
 * Thread safety: a slot is written with the one answer the process has (racing binders store the
 * same function), atomically; nothing takes a lock, so it works before main and after fork(). */
#include <dlfcn.h>
#include <stddef.h>
#include <stdlib.h>

#include <client/src/preload_shim/shim_core.h>
#include <client/src/preload_shim/shim_disable.h>
#include <client/src/preload_shim/shim_libc.h>
#include <client/src/preload_shim/shim_names.h>

#if !defined(__x86_64__)
#error "the preload shim's stubs are x86-64 assembly"
#endif

/* One line of assembly per line of source: */
/* clang-format off */
#define JITCACHE_STUB(name, kind) \
  __asm__(".pushsection .text\n" \
          ".globl " #name "\n" \
          ".type " #name ", @function\n" \
          ".globl jitcache_stub_" #name "\n" \
          ".hidden jitcache_stub_" #name "\n" \
          ".p2align 4\n" \
          #name ":\n" \
          "jitcache_stub_" #name ":\n" \
          "\tjmpq *jitcache_slot_" #name "(%rip)\n" \
          ".size " #name ", .-" #name "\n" \
          "jitcache_lazy_" #name ":\n" \
          "\tleaq jitcache_slot_" #name "(%rip), %r11\n" \
          "\tjmp jitcache_shim_lazy\n" \
          ".popsection\n" \
          ".pushsection .data.rel.local, \"aw\"\n" \
          ".p2align 3\n" \
          ".globl jitcache_slot_" #name "\n" \
          ".hidden jitcache_slot_" #name "\n" \
          "jitcache_slot_" #name ":\n" \
          "\t.quad jitcache_lazy_" #name "\n" \
          ".popsection\n");
/* clang-format on */
JITCACHE_HOOKED_NAMES(JITCACHE_STUB)

#define JITCACHE_DECLARE(name, kind)                                        \
  extern char jitcache_stub_##name[] __attribute__((visibility("hidden"))); \
  extern void* jitcache_slot_##name __attribute__((visibility("hidden")));
JITCACHE_HOOKED_NAMES(JITCACHE_DECLARE)

#define JITCACHE_NAME(name, kind) #name,
#define JITCACHE_KIND(name, kind) kind,
#define JITCACHE_STUB_ADDRESS(name, kind) (void*)jitcache_stub_##name,
#define JITCACHE_SLOT_ADDRESS(name, kind) &jitcache_slot_##name,

const char* const jitcache_shim_names[JITCACHE_HOOKED_NAME_COUNT] = {JITCACHE_HOOKED_NAMES(JITCACHE_NAME)};
const unsigned char jitcache_shim_kinds[JITCACHE_HOOKED_NAME_COUNT] = {JITCACHE_HOOKED_NAMES(JITCACHE_KIND)};
void* const jitcache_shim_stubs[JITCACHE_HOOKED_NAME_COUNT] = {JITCACHE_HOOKED_NAMES(JITCACHE_STUB_ADDRESS)};
static void** const k_slots[JITCACHE_HOOKED_NAME_COUNT] = {JITCACHE_HOOKED_NAMES(JITCACHE_SLOT_ADDRESS)};

/* The answers when there is neither a core nor a real function (a driver name reached by direct
 * binding in a process whose driver was unloaded, say): the error each library gives for "not
 * there". The stubs call them with the caller's arguments, which they ignore. */
static int cuda_not_initialized(void) { return 3; }        /* CUDA_ERROR_NOT_INITIALIZED */
static int nvjitlink_internal_error(void) { return 6; }    /* NVJITLINK_ERROR_INTERNAL */
static int cudart_initialization_error(void) { return 3; } /* cudaErrorInitializationError */
static int nvrtc_internal_error(void) { return 11; }       /* NVRTC_ERROR_INTERNAL_ERROR */
static int api_failed(void) { return -1; }
static const char* api_unknown_name(void) { return "unknown"; }

static void* fallback_of(unsigned kind) {
  switch (kind) {
    case JITCACHE_KIND_NVJITLINK: return (void*)&nvjitlink_internal_error;
    case JITCACHE_KIND_CUDART: return (void*)&cudart_initialization_error;
    case JITCACHE_KIND_NVRTC: return (void*)&nvrtc_internal_error;
    case JITCACHE_KIND_API_INT: return (void*)&api_failed;
    case JITCACHE_KIND_API_TEXT: return (void*)&api_unknown_name;
    default: return (void*)&cuda_not_initialized;
  }
}

/* `name` in the library loaded as `file`, if one is (RTLD_NOLOAD opens nothing new). */
static void* find_in_loaded(const char* file, const char* name) {
  if (file == NULL || *file == '\0') return NULL;
  void* library = dlopen(file, RTLD_LAZY | RTLD_NOLOAD);
  if (library == NULL) return NULL;
  void* found = jitcache_shim_libc_dlsym()(library, name);
  dlclose(library);
  return found;
}

/* The real function of name `index`: the next definition after the shim (another interposer's, or
 * the library's), else the library's own definition where it was opened with RTLD_LOCAL. */
static void* real_of(int index) {
  const char* name = jitcache_shim_names[index];
  void* found = jitcache_shim_next_definition(name);
  if (found != NULL && !jitcache_shim_contains(found)) return found;
  found = NULL;
  switch (jitcache_shim_kinds[index]) {
    case JITCACHE_KIND_CUDA:
      found = find_in_loaded(secure_getenv("JITCACHE_CUDA_DRIVER"), name);
      if (found == NULL) found = find_in_loaded("libcuda.so.1", name);
      break;
    case JITCACHE_KIND_NVJITLINK:
      found = find_in_loaded("libnvJitLink.so.13", name);
      if (found == NULL) found = find_in_loaded("libnvJitLink.so.12", name);
      break;
    case JITCACHE_KIND_CUDART:
      found = find_in_loaded("libcudart.so.13", name);
      if (found == NULL) found = find_in_loaded("libcudart.so.12", name);
      break;
    case JITCACHE_KIND_NVRTC:
      found = find_in_loaded("libnvrtc.so.13", name);
      if (found == NULL) found = find_in_loaded("libnvrtc.so.12", name);
      break;
    default: break;
  }
  return found != NULL && !jitcache_shim_contains(found) ? found : NULL;
}

static void* target_of(int index) {
  const unsigned kind = jitcache_shim_kinds[index];
  const int api = kind == JITCACHE_KIND_API_CURESULT || kind == JITCACHE_KIND_API_INT || kind == JITCACHE_KIND_API_TEXT;
  if (api || !jitcache_shim_disabled()) {
    const struct jitcache_core* core = jitcache_shim_core();
    if (core != NULL && core->entries[index] != NULL) return core->entries[index];
  }
  return api ? NULL : real_of(index);
}

__attribute__((used, visibility("hidden"))) void* jitcache_shim_bind(void** slot) {
  int index = -1;
  for (int i = 0; i < JITCACHE_HOOKED_NAME_COUNT; ++i) {
    if (k_slots[i] == slot) {
      index = i;
      break;
    }
  }
  if (index < 0) return (void*)&cuda_not_initialized;
  void* target = target_of(index);
  /* Nothing found is not kept: the library may be loaded later. */
  if (target == NULL) return fallback_of(jitcache_shim_kinds[index]);
  __atomic_store_n(slot, target, __ATOMIC_RELEASE);
  return target;
}

/* Entered by a jump from a slot's first thunk with the slot in %r11 and the caller's frame intact:
 * the argument registers (integer and vector) are kept around the call, the stack 16-byte aligned
 * at the call (7 pushes after the return address, then 128 bytes), and the jump leaves the stack
 * as the caller made it. */
__asm__(
    "  .pushsection .text\n"
    "  .globl jitcache_shim_lazy\n"
    "  .hidden jitcache_shim_lazy\n"
    "  .type jitcache_shim_lazy, @function\n"
    "jitcache_shim_lazy:\n"
    "  pushq %rdi\n"
    "  pushq %rsi\n"
    "  pushq %rdx\n"
    "  pushq %rcx\n"
    "  pushq %r8\n"
    "  pushq %r9\n"
    "  pushq %rax\n"
    "  subq $128, %rsp\n"
    "  movdqu %xmm0, 0(%rsp)\n"
    "  movdqu %xmm1, 16(%rsp)\n"
    "  movdqu %xmm2, 32(%rsp)\n"
    "  movdqu %xmm3, 48(%rsp)\n"
    "  movdqu %xmm4, 64(%rsp)\n"
    "  movdqu %xmm5, 80(%rsp)\n"
    "  movdqu %xmm6, 96(%rsp)\n"
    "  movdqu %xmm7, 112(%rsp)\n"
    "  movq %r11, %rdi\n"
    "  call jitcache_shim_bind\n"
    "  movq %rax, %r11\n"
    "  movdqu 0(%rsp), %xmm0\n"
    "  movdqu 16(%rsp), %xmm1\n"
    "  movdqu 32(%rsp), %xmm2\n"
    "  movdqu 48(%rsp), %xmm3\n"
    "  movdqu 64(%rsp), %xmm4\n"
    "  movdqu 80(%rsp), %xmm5\n"
    "  movdqu 96(%rsp), %xmm6\n"
    "  movdqu 112(%rsp), %xmm7\n"
    "  addq $128, %rsp\n"
    "  popq %rax\n"
    "  popq %r9\n"
    "  popq %r8\n"
    "  popq %rcx\n"
    "  popq %rdx\n"
    "  popq %rsi\n"
    "  popq %rdi\n"
    "  jmpq *%r11\n"
    "  .size jitcache_shim_lazy, .-jitcache_shim_lazy\n"
    "  .popsection\n");
