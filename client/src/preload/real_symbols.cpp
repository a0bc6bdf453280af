#include <client/src/preload/real_symbols.hpp>

#include <dlfcn.h>
#include <elf.h>
#include <link.h>

#include <cstdint>
#include <cstring>
#include <string>

#include <client/src/driver/driver_api.hpp>

namespace jitcache::client::preload {

namespace {

using DlsymFn = void* (*)(void*, const char*);
using DlvsymFn = void* (*)(void*, const char*, const char*);

// One mapped object's dynamic symbol table, as far as a lookup by name needs it.
struct DynamicTable {
  ElfW(Addr) base = 0;
  const ElfW(Sym) * symbols = nullptr;
  const char* strings = nullptr;
  const ElfW(Half) * versions = nullptr;  // DT_VERSYM, when there is one
  std::size_t count = 0;
};

// ld.so relocates some d_ptr entries in place and not others; an address below the load base is
// still relative to it.
const void* absolute(ElfW(Addr) base, ElfW(Addr) pointer) {
  return reinterpret_cast<const void*>(pointer < base ? base + pointer : pointer);
}

// The number of symbols, from DT_HASH's nchain or, without it, from the highest index DT_GNU_HASH's
// buckets and chains reach.
std::size_t symbol_count(const ElfW(Word) * sysv_hash, const std::uint32_t* gnu_hash) {
  if (sysv_hash != nullptr) return sysv_hash[1];
  if (gnu_hash == nullptr) return 0;
  const std::uint32_t buckets = gnu_hash[0];
  const std::uint32_t first = gnu_hash[1];
  const std::uint32_t bloom_words = gnu_hash[2];
  const auto* bucket =
      reinterpret_cast<const std::uint32_t*>(reinterpret_cast<const ElfW(Addr)*>(gnu_hash + 4) + bloom_words);
  const std::uint32_t* chain = bucket + buckets;
  std::uint32_t last = 0;
  for (std::uint32_t i = 0; i < buckets; ++i) last = bucket[i] > last ? bucket[i] : last;
  if (last < first) return first;
  while ((chain[last - first] & 1U) == 0) ++last;
  return last + 1;
}

DynamicTable table_of(const dl_phdr_info& info) {
  DynamicTable table;
  table.base = info.dlpi_addr;
  const ElfW(Dyn)* dynamic = nullptr;
  for (int i = 0; i < info.dlpi_phnum; ++i) {
    if (info.dlpi_phdr[i].p_type == PT_DYNAMIC) {
      dynamic = reinterpret_cast<const ElfW(Dyn)*>(info.dlpi_addr + info.dlpi_phdr[i].p_vaddr);
    }
  }
  if (dynamic == nullptr) return table;
  const ElfW(Word)* sysv_hash = nullptr;
  const std::uint32_t* gnu_hash = nullptr;
  for (const ElfW(Dyn)* d = dynamic; d->d_tag != DT_NULL; ++d) {
    const void* at = absolute(table.base, d->d_un.d_ptr);
    switch (d->d_tag) {
      case DT_SYMTAB: table.symbols = static_cast<const ElfW(Sym)*>(at); break;
      case DT_STRTAB: table.strings = static_cast<const char*>(at); break;
      case DT_VERSYM: table.versions = static_cast<const ElfW(Half)*>(at); break;
      case DT_HASH: sysv_hash = static_cast<const ElfW(Word)*>(at); break;
      case DT_GNU_HASH: gnu_hash = static_cast<const std::uint32_t*>(at); break;
      default: break;
    }
  }
  if (table.symbols != nullptr && table.strings != nullptr) table.count = symbol_count(sysv_hash, gnu_hash);
  return table;
}

// The default version (the one a program linked today binds to) of a defined function `name`.
void* find_default(const DynamicTable& table, const char* name) {
  for (std::size_t i = 0; i < table.count; ++i) {
    const ElfW(Sym)& symbol = table.symbols[i];
    if (symbol.st_shndx == SHN_UNDEF || ELF64_ST_TYPE(symbol.st_info) != STT_FUNC) continue;
    if (table.versions != nullptr && (table.versions[i] & 0x8000) != 0) continue;  // a hidden, older version
    if (std::strcmp(table.strings + symbol.st_name, name) != 0) continue;
    return reinterpret_cast<void*>(table.base + symbol.st_value);
  }
  return nullptr;
}

struct LibcFunctions {
  DlsymFn dlsym = nullptr;
  DlvsymFn dlvsym = nullptr;
};

bool named(const char* path, const char* file) {
  const char* slash = std::strrchr(path, '/');
  return std::strcmp(slash != nullptr ? slash + 1 : path, file) == 0;
}

int visit(dl_phdr_info* info, std::size_t, void* data) {
  auto* found = static_cast<LibcFunctions*>(data);
  if (info->dlpi_name == nullptr || !(named(info->dlpi_name, "libc.so.6") || named(info->dlpi_name, "libdl.so.2"))) {
    return 0;
  }
  const DynamicTable table = table_of(*info);
  // glibc 2.34 moved dlsym into libc; before that it lives in libdl.
  if (found->dlsym == nullptr) found->dlsym = reinterpret_cast<DlsymFn>(find_default(table, "dlsym"));
  if (found->dlvsym == nullptr) found->dlvsym = reinterpret_cast<DlvsymFn>(find_default(table, "dlvsym"));
  return found->dlsym != nullptr && found->dlvsym != nullptr ? 1 : 0;
}

std::atomic<DlsymFn> g_dlsym{nullptr};
std::atomic<DlvsymFn> g_dlvsym{nullptr};

void find_libc_functions() {
  LibcFunctions found;
  ::dl_iterate_phdr(visit, &found);
  g_dlsym.store(found.dlsym, std::memory_order_release);
  g_dlvsym.store(found.dlvsym, std::memory_order_release);
}

std::atomic<void*> g_cuda{nullptr};

// This library's address range [start, end), from its PT_LOAD segments.
struct Range {
  std::uintptr_t start = 0;
  std::uintptr_t end = 0;
};
std::atomic<std::uintptr_t> g_self_start{0};
std::atomic<std::uintptr_t> g_self_end{0};

int find_self(dl_phdr_info* info, std::size_t, void* data) {
  auto* range = static_cast<Range*>(data);
  const auto marker = reinterpret_cast<std::uintptr_t>(&find_self);
  Range object{UINTPTR_MAX, 0};
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& segment = info->dlpi_phdr[i];
    if (segment.p_type != PT_LOAD) continue;
    const std::uintptr_t start = info->dlpi_addr + segment.p_vaddr;
    const std::uintptr_t end = start + segment.p_memsz;
    object.start = start < object.start ? start : object.start;
    object.end = end > object.end ? end : object.end;
  }
  if (marker < object.start || marker >= object.end) return 0;
  *range = object;
  return 1;
}

}  // namespace

void* real_dlsym(void* handle, const char* name) {
  DlsymFn fn = g_dlsym.load(std::memory_order_acquire);
  if (fn == nullptr) {
    find_libc_functions();
    fn = g_dlsym.load(std::memory_order_acquire);
  }
  return fn != nullptr ? fn(handle, name) : nullptr;
}

void* real_dlvsym(void* handle, const char* name, const char* version) {
  DlvsymFn fn = g_dlvsym.load(std::memory_order_acquire);
  if (fn == nullptr) {
    find_libc_functions();
    fn = g_dlvsym.load(std::memory_order_acquire);
  }
  return fn != nullptr ? fn(handle, name, version) : nullptr;
}

void* real_dlsym_address() {
  if (g_dlsym.load(std::memory_order_acquire) == nullptr) find_libc_functions();
  return reinterpret_cast<void*>(g_dlsym.load(std::memory_order_acquire));
}

void* real_dlvsym_address() {
  if (g_dlvsym.load(std::memory_order_acquire) == nullptr) find_libc_functions();
  return reinterpret_cast<void*>(g_dlvsym.load(std::memory_order_acquire));
}

void* cuda_library() {
  if (void* known = g_cuda.load(std::memory_order_acquire)) return known;
  // Rationale: the driver the program already uses comes first (RTLD_NOLOAD opens nothing new),
  // so the real functions are the ones its own calls would reach; only a program that has not
  // loaded it yet gets the one the client would open.
  const std::string configured = driver::default_driver_path();
  void* handle = ::dlopen(configured.c_str(), RTLD_NOW | RTLD_NOLOAD);
  if (handle == nullptr) handle = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  if (handle == nullptr) handle = ::dlopen(configured.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) return nullptr;
  void* expected = nullptr;
  if (!g_cuda.compare_exchange_strong(expected, handle, std::memory_order_acq_rel)) return expected;
  return handle;
}

void* resolve_real(const Hook& hook) {
  if (void* known = hook.real->load(std::memory_order_acquire)) return known;
  void* found = nullptr;
  if (hook.library == HookedLibrary::cuda) {
    if (void* cuda = cuda_library()) found = real_dlsym(cuda, hook.symbol);
  } else {
    found = real_dlsym(RTLD_NEXT, hook.symbol);
  }
  if (found == nullptr || found == hook.wrapper) return nullptr;
  void* expected = nullptr;
  if (!hook.real->compare_exchange_strong(expected, found, std::memory_order_acq_rel)) return expected;
  return found;
}

bool adopt_real(const Hook& hook, void* address) {
  if (address == nullptr || address == hook.wrapper) return false;
  void* expected = nullptr;
  if (hook.real->compare_exchange_strong(expected, address, std::memory_order_acq_rel)) return true;
  return expected == address;
}

bool inside_preload(const void* address) {
  // end is stored after start and read before it, so a reader that sees an end sees its start.
  std::uintptr_t end = g_self_end.load(std::memory_order_acquire);
  std::uintptr_t start = g_self_start.load(std::memory_order_acquire);
  if (end == 0) {
    Range self;
    ::dl_iterate_phdr(find_self, &self);
    start = self.start;
    end = self.end;
    g_self_start.store(start, std::memory_order_release);
    g_self_end.store(end, std::memory_order_release);
  }
  const auto at = reinterpret_cast<std::uintptr_t>(address);
  return at >= start && at < end;
}

bool inside_libjitcache(const void* address) {
  Dl_info info{};
  if (::dladdr(address, &info) == 0 || info.dli_fname == nullptr) return false;
  const char* slash = std::strrchr(info.dli_fname, '/');
  return std::strncmp(slash != nullptr ? slash + 1 : info.dli_fname, "libjitcache.so", 14) == 0;
}

}  // namespace jitcache::client::preload
