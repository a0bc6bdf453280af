// nvJitLink's link calls through the cache (docs/transparent.md "Link sessions"): Create, Destroy,
// AddData, AddFile, Complete, GetLinkedCubin{Size,}, GetLinkedPtx{Size,}, GetErrorLog{Size,} and
// GetInfoLog{Size,}, under every name a program can have bound them to: the unversioned names
// (cuda-python loads those) and the versioned symbols nvJitLink.h maps them to in each release,
// __nvJitLink<Name>_12_0 ... _12_9, _13_0 ... _13_2 (a library exports those of its release and of
// every earlier one of its major). Each name is a family: a wrapper hands the real functions of its
// own family and the program's arguments to the link session calls (client/src/link/
// nvjitlink_calls.hpp). A program that links nvJitLink statically calls none of these names and is
// not seen (nothing breaks; docs/transparent.md).
//
// The real functions come from the next library after this one (RTLD_NEXT: a program linked
// against libnvJitLink), or from the library a program dlopen()ed itself, adopted when it looks a
// name up (symbol_routes.hpp); the rest of that family is then found in the same library.
// Thread safety: as nvJitLink's functions.
#include <dlfcn.h>

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>

#include <client/src/driver/driver_api.hpp>
#include <client/src/link/nvjitlink_calls.hpp>
#include <client/src/link/nvjitlink_entry_points.hpp>
#include <client/src/preload/hook.hpp>
#include <client/src/preload/real_symbols.hpp>
#include <client/src/preload/symbol_routes.hpp>

namespace jitcache::client::preload {

namespace {

// The functions of one family, in the order of every family's hooks below.
enum Function : std::size_t {
  k_create,
  k_destroy,
  k_add_data,
  k_add_file,
  k_complete,
  k_cubin_size,
  k_cubin,
  k_ptx_size,
  k_ptx,
  k_error_log_size,
  k_error_log,
  k_info_log_size,
  k_info_log,
  k_functions
};
// The families: unversioned, then every 12.x and 13.x release (there was no 12.7).
constexpr std::size_t k_families = 13;

std::atomic<void*> g_real[k_families][k_functions];

extern const Hook k_nvjitlink_hooks[k_families * k_functions];

const Hook& hook_of(std::size_t family, Function function) {
  return k_nvjitlink_hooks[family * k_functions + function];
}

// The sonames a family's library goes by: its release's major (the unversioned names: either).
std::array<const char*, 2> sonames_of(std::size_t family) {
  if (family == 0) return {"libnvJitLink.so.13", "libnvJitLink.so.12"};
  if (family <= 9) return {"libnvJitLink.so.12", nullptr};
  return {"libnvJitLink.so.13", nullptr};
}

// `symbol` in the library loaded as `file`, if one is (RTLD_NOLOAD opens nothing new).
void* find_in_loaded(const char* file, const char* symbol) {
  void* library = ::dlopen(file, RTLD_LAZY | RTLD_NOLOAD);
  if (library == nullptr) return nullptr;
  void* found = real_dlsym(library, symbol);
  ::dlclose(library);
  return found;
}

// The real function of `function` in `family`: the next definition after this library, or one
// adopted from a program's dlsym (resolve_real); else the same name in the library of the family's
// Create; else in a libnvJitLink loaded where RTLD_NEXT does not look (a library that links
// nvJitLink, itself opened with RTLD_LOCAL). Rationale: a call that reached a wrapper must reach
// nvJitLink, whoever loaded it.
void* real_of(std::size_t family, Function function) {
  const Hook& hook = hook_of(family, function);
  if (void* found = resolve_real(hook)) return found;
  void* found = nullptr;
  Dl_info info{};
  if (function != k_create) {
    void* create = real_of(family, k_create);
    if (create != nullptr && ::dladdr(create, &info) != 0 && info.dli_fname != nullptr) {
      found = find_in_loaded(info.dli_fname, hook.symbol);
    }
  }
  for (const char* soname : sonames_of(family)) {
    if (found == nullptr && soname != nullptr) found = find_in_loaded(soname, hook.symbol);
  }
  if (found == nullptr || !adopt_real(hook, found)) return resolve_real(hook);
  return found;
}

link::NvJitLinkEntryPoints family_of(std::size_t family) {
  link::NvJitLinkEntryPoints real;
  real.create = reinterpret_cast<decltype(real.create)>(real_of(family, k_create));
  real.destroy = reinterpret_cast<decltype(real.destroy)>(real_of(family, k_destroy));
  real.add_data = reinterpret_cast<decltype(real.add_data)>(real_of(family, k_add_data));
  real.add_file = reinterpret_cast<decltype(real.add_file)>(real_of(family, k_add_file));
  real.complete = reinterpret_cast<decltype(real.complete)>(real_of(family, k_complete));
  real.get_linked_cubin_size = reinterpret_cast<decltype(real.get_linked_cubin_size)>(real_of(family, k_cubin_size));
  real.get_linked_cubin = reinterpret_cast<decltype(real.get_linked_cubin)>(real_of(family, k_cubin));
  real.get_linked_ptx_size = reinterpret_cast<decltype(real.get_linked_ptx_size)>(real_of(family, k_ptx_size));
  real.get_linked_ptx = reinterpret_cast<decltype(real.get_linked_ptx)>(real_of(family, k_ptx));
  real.get_error_log_size = reinterpret_cast<decltype(real.get_error_log_size)>(real_of(family, k_error_log_size));
  real.get_error_log = reinterpret_cast<decltype(real.get_error_log)>(real_of(family, k_error_log));
  real.get_info_log_size = reinterpret_cast<decltype(real.get_info_log_size)>(real_of(family, k_info_log_size));
  real.get_info_log = reinterpret_cast<decltype(real.get_info_log)>(real_of(family, k_info_log));
  return real;
}

// Whether `caller` (a return address) lies in the CUDA driver the process has loaded. Rationale: a
// driver may link nvJitLink for its own JIT (the test suite's fake driver does); its calls are not
// the program's links, and keying them would cache every module load twice.
bool called_by_driver(const void* caller) {
  Dl_info at{};
  if (::dladdr(caller, &at) == 0) return false;
  void* cuda = ::dlopen(driver::default_driver_path().c_str(), RTLD_LAZY | RTLD_NOLOAD);
  if (cuda == nullptr) cuda = ::dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
  if (cuda == nullptr) return false;
  void* entry = real_dlsym(cuda, "cuGetProcAddress");
  ::dlclose(cuda);
  Dl_info driver_info{};
  return entry != nullptr && ::dladdr(entry, &driver_info) != 0 && driver_info.dli_fbase == at.dli_fbase;
}

nvJitLinkResult create(std::size_t family, nvJitLinkHandle* handle, std::uint32_t count, const char* const* options,
                       const void* caller) {
  const link::NvJitLinkEntryPoints real = family_of(family);
  if (real.create == nullptr) return NVJITLINK_ERROR_INTERNAL;
  if (preload_disabled() || called_by_driver(caller)) return real.create(handle, count, options);
  return link::nvjitlink_create(real, &real_dlsym, handle, count, options);
}

}  // namespace

}  // namespace jitcache::client::preload

namespace preload = jitcache::client::preload;
namespace jlink = jitcache::client::link;

// Rationale: one macro stamps out the 13 exported wrappers of a family, so the 13 families cannot
// drift apart; each wrapper only names its family and passes its arguments on. A function the
// family's library lacks answers NVJITLINK_ERROR_INTERNAL (a program cannot have bound it).
#define JITCACHE_NVJITLINK_CALL(F, FUNCTION, CALL, ...)           \
  const jlink::NvJitLinkEntryPoints real = preload::family_of(F); \
  if (real.FUNCTION == nullptr) return NVJITLINK_ERROR_INTERNAL;  \
  return jlink::CALL(real, __VA_ARGS__)

#define JITCACHE_NVJITLINK_FAMILY(F, PREFIX, SUFFIX)                                                                 \
  nvJitLinkResult PREFIX##Create##SUFFIX(nvJitLinkHandle* handle, uint32_t numOptions, const char* const* options) { \
    return preload::create(F, handle, numOptions, options, __builtin_return_address(0));                             \
  }                                                                                                                  \
  nvJitLinkResult PREFIX##Destroy##SUFFIX(nvJitLinkHandle* handle) {                                                 \
    JITCACHE_NVJITLINK_CALL(F, destroy, nvjitlink_destroy, handle);                                                  \
  }                                                                                                                  \
  nvJitLinkResult PREFIX##AddData##SUFFIX(nvJitLinkHandle handle, nvJitLinkInputType inputType, const void* data,    \
                                          size_t size, const char* name) {                                           \
    JITCACHE_NVJITLINK_CALL(F, add_data, nvjitlink_add_data, handle, inputType, data, size, name);                   \
  }                                                                                                                  \
  nvJitLinkResult PREFIX##AddFile##SUFFIX(nvJitLinkHandle handle, nvJitLinkInputType inputType,                      \
                                          const char* fileName) {                                                    \
    JITCACHE_NVJITLINK_CALL(F, add_file, nvjitlink_add_file, handle, inputType, fileName);                           \
  }                                                                                                                  \
  nvJitLinkResult PREFIX##Complete##SUFFIX(nvJitLinkHandle handle) {                                                 \
    const jlink::NvJitLinkEntryPoints real = preload::family_of(F);                                                  \
    if (real.complete == nullptr) return NVJITLINK_ERROR_INTERNAL;                                                   \
    return jlink::nvjitlink_complete(real, handle, #PREFIX "Complete" #SUFFIX);                                      \
  }                                                                                                                  \
  nvJitLinkResult PREFIX##GetLinkedCubinSize##SUFFIX(nvJitLinkHandle handle, size_t* size) {                         \
    JITCACHE_NVJITLINK_CALL(F, get_linked_cubin_size, nvjitlink_linked_cubin_size, handle, size);                    \
  }                                                                                                                  \
  nvJitLinkResult PREFIX##GetLinkedCubin##SUFFIX(nvJitLinkHandle handle, void* cubin) {                              \
    JITCACHE_NVJITLINK_CALL(F, get_linked_cubin, nvjitlink_linked_cubin, handle, cubin);                             \
  }                                                                                                                  \
  nvJitLinkResult PREFIX##GetLinkedPtxSize##SUFFIX(nvJitLinkHandle handle, size_t* size) {                           \
    JITCACHE_NVJITLINK_CALL(F, get_linked_ptx_size, nvjitlink_linked_ptx_size, handle, size);                        \
  }                                                                                                                  \
  nvJitLinkResult PREFIX##GetLinkedPtx##SUFFIX(nvJitLinkHandle handle, char* ptx) {                                  \
    JITCACHE_NVJITLINK_CALL(F, get_linked_ptx, nvjitlink_linked_ptx, handle, ptx);                                   \
  }                                                                                                                  \
  nvJitLinkResult PREFIX##GetErrorLogSize##SUFFIX(nvJitLinkHandle handle, size_t* size) {                            \
    JITCACHE_NVJITLINK_CALL(F, get_error_log_size, nvjitlink_error_log_size, handle, size);                          \
  }                                                                                                                  \
  nvJitLinkResult PREFIX##GetErrorLog##SUFFIX(nvJitLinkHandle handle, char* log) {                                   \
    JITCACHE_NVJITLINK_CALL(F, get_error_log, nvjitlink_error_log, handle, log);                                     \
  }                                                                                                                  \
  nvJitLinkResult PREFIX##GetInfoLogSize##SUFFIX(nvJitLinkHandle handle, size_t* size) {                             \
    JITCACHE_NVJITLINK_CALL(F, get_info_log_size, nvjitlink_info_log_size, handle, size);                            \
  }                                                                                                                  \
  nvJitLinkResult PREFIX##GetInfoLog##SUFFIX(nvJitLinkHandle handle, char* log) {                                    \
    JITCACHE_NVJITLINK_CALL(F, get_info_log, nvjitlink_info_log, handle, log);                                       \
  }

extern "C" {
#pragma GCC visibility push(default)

JITCACHE_NVJITLINK_FAMILY(0, nvJitLink, )
JITCACHE_NVJITLINK_FAMILY(1, __nvJitLink, _12_0)
JITCACHE_NVJITLINK_FAMILY(2, __nvJitLink, _12_1)
JITCACHE_NVJITLINK_FAMILY(3, __nvJitLink, _12_2)
JITCACHE_NVJITLINK_FAMILY(4, __nvJitLink, _12_3)
JITCACHE_NVJITLINK_FAMILY(5, __nvJitLink, _12_4)
JITCACHE_NVJITLINK_FAMILY(6, __nvJitLink, _12_5)
JITCACHE_NVJITLINK_FAMILY(7, __nvJitLink, _12_6)
JITCACHE_NVJITLINK_FAMILY(8, __nvJitLink, _12_8)
JITCACHE_NVJITLINK_FAMILY(9, __nvJitLink, _12_9)
JITCACHE_NVJITLINK_FAMILY(10, __nvJitLink, _13_0)
JITCACHE_NVJITLINK_FAMILY(11, __nvJitLink, _13_1)
JITCACHE_NVJITLINK_FAMILY(12, __nvJitLink, _13_2)

#pragma GCC visibility pop
}  // extern "C"

namespace jitcache::client::preload {

namespace {

#define JITCACHE_NVJITLINK_HOOK(F, PREFIX, NAME, SUFFIX, FUNCTION)                                                 \
  Hook {                                                                                                           \
#PREFIX #NAME #SUFFIX, nullptr, 0, HookedLibrary::nvjitlink, reinterpret_cast < void*>(&PREFIX##NAME##SUFFIX), \
        &g_real[F][FUNCTION]                                                                                       \
  }
#define JITCACHE_NVJITLINK_HOOKS(F, PREFIX, SUFFIX)                                  \
  JITCACHE_NVJITLINK_HOOK(F, PREFIX, Create, SUFFIX, k_create),                      \
      JITCACHE_NVJITLINK_HOOK(F, PREFIX, Destroy, SUFFIX, k_destroy),                \
      JITCACHE_NVJITLINK_HOOK(F, PREFIX, AddData, SUFFIX, k_add_data),               \
      JITCACHE_NVJITLINK_HOOK(F, PREFIX, AddFile, SUFFIX, k_add_file),               \
      JITCACHE_NVJITLINK_HOOK(F, PREFIX, Complete, SUFFIX, k_complete),              \
      JITCACHE_NVJITLINK_HOOK(F, PREFIX, GetLinkedCubinSize, SUFFIX, k_cubin_size),  \
      JITCACHE_NVJITLINK_HOOK(F, PREFIX, GetLinkedCubin, SUFFIX, k_cubin),           \
      JITCACHE_NVJITLINK_HOOK(F, PREFIX, GetLinkedPtxSize, SUFFIX, k_ptx_size),      \
      JITCACHE_NVJITLINK_HOOK(F, PREFIX, GetLinkedPtx, SUFFIX, k_ptx),               \
      JITCACHE_NVJITLINK_HOOK(F, PREFIX, GetErrorLogSize, SUFFIX, k_error_log_size), \
      JITCACHE_NVJITLINK_HOOK(F, PREFIX, GetErrorLog, SUFFIX, k_error_log),          \
      JITCACHE_NVJITLINK_HOOK(F, PREFIX, GetInfoLogSize, SUFFIX, k_info_log_size),   \
      JITCACHE_NVJITLINK_HOOK(F, PREFIX, GetInfoLog, SUFFIX, k_info_log)

// Not reachable through cuGetProcAddress (base nullptr): nvJitLink is not the driver.
const Hook k_nvjitlink_hooks[k_families * k_functions] = {
    JITCACHE_NVJITLINK_HOOKS(0, nvJitLink, ),         JITCACHE_NVJITLINK_HOOKS(1, __nvJitLink, _12_0),
    JITCACHE_NVJITLINK_HOOKS(2, __nvJitLink, _12_1),  JITCACHE_NVJITLINK_HOOKS(3, __nvJitLink, _12_2),
    JITCACHE_NVJITLINK_HOOKS(4, __nvJitLink, _12_3),  JITCACHE_NVJITLINK_HOOKS(5, __nvJitLink, _12_4),
    JITCACHE_NVJITLINK_HOOKS(6, __nvJitLink, _12_5),  JITCACHE_NVJITLINK_HOOKS(7, __nvJitLink, _12_6),
    JITCACHE_NVJITLINK_HOOKS(8, __nvJitLink, _12_8),  JITCACHE_NVJITLINK_HOOKS(9, __nvJitLink, _12_9),
    JITCACHE_NVJITLINK_HOOKS(10, __nvJitLink, _13_0), JITCACHE_NVJITLINK_HOOKS(11, __nvJitLink, _13_1),
    JITCACHE_NVJITLINK_HOOKS(12, __nvJitLink, _13_2),
};

#undef JITCACHE_NVJITLINK_HOOKS
#undef JITCACHE_NVJITLINK_HOOK

}  // namespace

std::span<const Hook> nvjitlink_hooks() { return k_nvjitlink_hooks; }

}  // namespace jitcache::client::preload
