#include <client/src/preload/real_symbols.hpp>

#include <dlfcn.h>
#include <link.h>

#include <cstdint>
#include <cstring>
#include <string>

#include <client/src/driver/driver_api.hpp>
#include <client/src/preload/shim_link.hpp>

namespace jitcache::client::preload {

namespace {

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

void* real_dlsym(void* handle, const char* name) { return shim().libc_dlsym(handle, name); }

void* real_dlvsym(void* handle, const char* name, const char* version) {
  return shim().libc_dlvsym(handle, name, version);
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
  // Rationale: the next definition after the shim is the real one, so that another interposer
  // after ours (a tracer, a quota library) still sees the call; a driver the program opened with
  // RTLD_LOCAL is not in that search, and its own definition is the real one then.
  void* found = shim().next_definition(hook.symbol);
  if (found == nullptr && hook.library == HookedLibrary::cuda) {
    if (void* cuda = cuda_library()) found = real_dlsym(cuda, hook.symbol);
  }
  if (found == nullptr || hook_at(found) != nullptr) return nullptr;
  void* expected = nullptr;
  if (!hook.real->compare_exchange_strong(expected, found, std::memory_order_acq_rel)) return expected;
  return found;
}

bool adopt_real(const Hook& hook, void* address) {
  if (address == nullptr || hook_at(address) != nullptr) return false;
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
