#include <client/src/preload_shim/shim_libc.h>

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* One mapped object's dynamic symbol table, as far as a lookup by name needs it. */
struct dynamic_table {
  ElfW(Addr) base;
  const ElfW(Sym) * symbols;
  const char* strings;
  const ElfW(Half) * versions; /* DT_VERSYM, when there is one */
  size_t count;
};

/* ld.so relocates some d_ptr entries in place and not others; an address below the load base is
 * still relative to it. */
static const void* absolute(ElfW(Addr) base, ElfW(Addr) pointer) {
  return (const void*)(pointer < base ? base + pointer : pointer);
}

/* The number of symbols: DT_HASH's nchain or, without it, the highest index DT_GNU_HASH reaches. */
static size_t symbol_count(const ElfW(Word) * sysv_hash, const uint32_t* gnu_hash) {
  if (sysv_hash != NULL) return sysv_hash[1];
  if (gnu_hash == NULL) return 0;
  const uint32_t buckets = gnu_hash[0];
  const uint32_t first = gnu_hash[1];
  const uint32_t bloom_words = gnu_hash[2];
  const uint32_t* bucket = (const uint32_t*)((const ElfW(Addr)*)(gnu_hash + 4) + bloom_words);
  const uint32_t* chain = bucket + buckets;
  uint32_t last = 0;
  for (uint32_t i = 0; i < buckets; ++i) last = bucket[i] > last ? bucket[i] : last;
  if (last < first) return first;
  while ((chain[last - first] & 1U) == 0) ++last;
  return last + 1;
}

static struct dynamic_table table_of(const struct dl_phdr_info* info) {
  struct dynamic_table table = {info->dlpi_addr, NULL, NULL, NULL, 0};
  const ElfW(Dyn)* dynamic = NULL;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    if (info->dlpi_phdr[i].p_type == PT_DYNAMIC) {
      dynamic = (const ElfW(Dyn)*)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
    }
  }
  if (dynamic == NULL) return table;
  const ElfW(Word)* sysv_hash = NULL;
  const uint32_t* gnu_hash = NULL;
  for (const ElfW(Dyn)* d = dynamic; d->d_tag != DT_NULL; ++d) {
    const void* at = absolute(table.base, d->d_un.d_ptr);
    switch (d->d_tag) {
      case DT_SYMTAB: table.symbols = (const ElfW(Sym)*)at; break;
      case DT_STRTAB: table.strings = (const char*)at; break;
      case DT_VERSYM: table.versions = (const ElfW(Half)*)at; break;
      case DT_HASH: sysv_hash = (const ElfW(Word)*)at; break;
      case DT_GNU_HASH: gnu_hash = (const uint32_t*)at; break;
      default: break;
    }
  }
  if (table.symbols != NULL && table.strings != NULL) table.count = symbol_count(sysv_hash, gnu_hash);
  return table;
}

/* The default version (the one a program linked today binds to) of a defined function `name`. */
static void* find_default(const struct dynamic_table* table, const char* name) {
  for (size_t i = 0; i < table->count; ++i) {
    const ElfW(Sym)* symbol = &table->symbols[i];
    if (symbol->st_shndx == SHN_UNDEF || ELF64_ST_TYPE(symbol->st_info) != STT_FUNC) continue;
    if (table->versions != NULL && (table->versions[i] & 0x8000) != 0) continue; /* a hidden, older version */
    if (strcmp(table->strings + symbol->st_name, name) != 0) continue;
    return (void*)(table->base + symbol->st_value);
  }
  return NULL;
}

static int named(const char* path, const char* file) {
  const char* slash = strrchr(path, '/');
  return strcmp(slash != NULL ? slash + 1 : path, file) == 0;
}

struct libc_functions {
  void* dlsym;
  void* dlvsym;
};

static int visit_libc(struct dl_phdr_info* info, size_t size, void* data) {
  (void)size;
  struct libc_functions* found = data;
  if (info->dlpi_name == NULL || !(named(info->dlpi_name, "libc.so.6") || named(info->dlpi_name, "libdl.so.2"))) {
    return 0;
  }
  const struct dynamic_table table = table_of(info);
  /* glibc 2.34 moved dlsym into libc; before that it lives in libdl. */
  if (found->dlsym == NULL) found->dlsym = find_default(&table, "dlsym");
  if (found->dlvsym == NULL) found->dlvsym = find_default(&table, "dlvsym");
  return found->dlsym != NULL && found->dlvsym != NULL;
}

static void* find_nothing(void* handle, const char* name) {
  (void)handle;
  (void)name;
  return NULL;
}
static void* find_no_version(void* handle, const char* name, const char* version) {
  (void)handle;
  (void)name;
  (void)version;
  return NULL;
}

static void* g_libc_dlsym;
static void* g_libc_dlvsym;

static void find_libc(void) {
  struct libc_functions found = {NULL, NULL};
  dl_iterate_phdr(visit_libc, &found);
  __atomic_store_n(&g_libc_dlvsym, found.dlvsym != NULL ? found.dlvsym : (void*)&find_no_version, __ATOMIC_RELEASE);
  __atomic_store_n(&g_libc_dlsym, found.dlsym != NULL ? found.dlsym : (void*)&find_nothing, __ATOMIC_RELEASE);
}

jitcache_dlsym_fn jitcache_shim_libc_dlsym(void) {
  void* fn = __atomic_load_n(&g_libc_dlsym, __ATOMIC_ACQUIRE);
  if (fn == NULL) {
    find_libc();
    fn = __atomic_load_n(&g_libc_dlsym, __ATOMIC_ACQUIRE);
  }
  return (jitcache_dlsym_fn)fn;
}

jitcache_dlvsym_fn jitcache_shim_libc_dlvsym(void) {
  if (__atomic_load_n(&g_libc_dlsym, __ATOMIC_ACQUIRE) == NULL) find_libc();
  return (jitcache_dlvsym_fn)__atomic_load_n(&g_libc_dlvsym, __ATOMIC_ACQUIRE);
}

/* Rationale: glibc's dlsym reads its caller's return address, and RTLD_NEXT means "after the
 * caller's object". The call below must therefore be made from the shim's code: the empty asm
 * after it keeps the compiler from turning it into a tail call, which would hand libc the return
 * address of whoever called this function (the core, for one). */
__attribute__((noinline)) void* jitcache_shim_next_definition(const char* name) {
  void* found = jitcache_shim_libc_dlsym()(RTLD_NEXT, name);
  __asm__ volatile("" ::: "memory");
  return found;
}

__attribute__((noinline)) void* jitcache_shim_next_versioned(const char* name, const char* version) {
  void* found = jitcache_shim_libc_dlvsym()(RTLD_NEXT, name, version);
  __asm__ volatile("" ::: "memory");
  return found;
}

static void* g_next_dlsym;
static void* g_next_dlvsym;

jitcache_dlsym_fn jitcache_shim_next_dlsym(void) {
  void* fn = __atomic_load_n(&g_next_dlsym, __ATOMIC_ACQUIRE);
  if (fn == NULL) {
    fn = jitcache_shim_next_definition("dlsym");
    if (fn == NULL || jitcache_shim_contains(fn)) fn = (void*)jitcache_shim_libc_dlsym();
    __atomic_store_n(&g_next_dlsym, fn, __ATOMIC_RELEASE);
  }
  return (jitcache_dlsym_fn)fn;
}

jitcache_dlvsym_fn jitcache_shim_next_dlvsym(void) {
  void* fn = __atomic_load_n(&g_next_dlvsym, __ATOMIC_ACQUIRE);
  if (fn == NULL) {
    fn = jitcache_shim_next_definition("dlvsym");
    if (fn == NULL || jitcache_shim_contains(fn)) fn = (void*)jitcache_shim_libc_dlvsym();
    __atomic_store_n(&g_next_dlvsym, fn, __ATOMIC_RELEASE);
  }
  return (jitcache_dlvsym_fn)fn;
}

struct range {
  uintptr_t start;
  uintptr_t end;
};
static uintptr_t g_self_start;
static uintptr_t g_self_end;

static int find_self(struct dl_phdr_info* info, size_t size, void* data) {
  (void)size;
  struct range* self = data;
  const uintptr_t marker = (uintptr_t)&find_self;
  struct range object = {UINTPTR_MAX, 0};
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)* segment = &info->dlpi_phdr[i];
    if (segment->p_type != PT_LOAD) continue;
    const uintptr_t start = info->dlpi_addr + segment->p_vaddr;
    const uintptr_t end = start + segment->p_memsz;
    object.start = start < object.start ? start : object.start;
    object.end = end > object.end ? end : object.end;
  }
  if (marker < object.start || marker >= object.end) return 0;
  *self = object;
  return 1;
}

int jitcache_shim_contains(const void* address) {
  /* end is stored after start and read before it, so a reader that sees an end sees its start. */
  uintptr_t end = __atomic_load_n(&g_self_end, __ATOMIC_ACQUIRE);
  uintptr_t start = __atomic_load_n(&g_self_start, __ATOMIC_ACQUIRE);
  if (end == 0) {
    struct range self = {0, 0};
    dl_iterate_phdr(find_self, &self);
    start = self.start;
    end = self.end;
    __atomic_store_n(&g_self_start, start, __ATOMIC_RELEASE);
    __atomic_store_n(&g_self_end, end, __ATOMIC_RELEASE);
  }
  const uintptr_t at = (uintptr_t)address;
  return at >= start && at < end;
}

void* jitcache_shim_found(void* answer) {
  if (answer != NULL) (void)dlerror();
  return answer;
}
