// NVRTC's program lifecycle through the cache (docs/transparent.md "NVRTC compiles"):
// nvrtcCreateProgram, nvrtcDestroyProgram, nvrtcAddNameExpression, nvrtcCompileProgram,
// nvrtcGetLoweredName, and the outputs a program asks for, nvrtcGet{ProgramLog,PTX,CUBIN,LTOIR,
// OptiXIR}{Size,}. NVRTC's names carry no version, so one family serves every release. The wrappers
// hand the real functions and the program's arguments to client/src/nvrtc/nvrtc_calls.hpp.
//
// The real functions come from the next library after this one (RTLD_NEXT: a program linked
// against libnvrtc), or from the library a program dlopen()ed itself, adopted when it looks a name
// up (symbol_routes.hpp: CuPy, PyTorch and DeepGEMM open libnvrtc so); the rest of the set is then
// found in the same library as nvrtcCreateProgram. A program that links NVRTC statically
// (libnvrtc_static.a) calls none of these names and is not seen.
// Thread safety: as NVRTC's functions.
#include <dlfcn.h>

#include <array>
#include <atomic>
#include <cstddef>

#include <client/src/nvrtc/nvrtc_calls.hpp>
#include <client/src/preload/hook.hpp>
#include <client/src/preload/real_symbols.hpp>
#include <client/src/preload/symbol_routes.hpp>

namespace jitcache::client::preload {

namespace {

namespace jnvrtc = jitcache::client::nvrtc;

// The hooked functions, in the order of the table below.
enum Function : std::size_t {
  k_create,
  k_destroy,
  k_add_name,
  k_compile,
  k_lowered,
  k_log_size,
  k_log,
  k_ptx_size,
  k_ptx,
  k_cubin_size,
  k_cubin,
  k_ltoir_size,
  k_ltoir,
  k_optixir_size,
  k_optixir,
  k_functions
};

std::atomic<void*> g_real[k_functions];
// nvrtcVersion of the library of the real nvrtcCompileProgram, found once (every call builds the
// entry points; a dlopen per call would take the loader's lock each time).
std::atomic<void*> g_version{nullptr};

extern const Hook k_nvrtc_hooks[k_functions];

// `symbol` in the library loaded as `file`, if one is (RTLD_NOLOAD opens nothing new).
void* find_in_loaded(const char* file, const char* symbol) {
  void* library = ::dlopen(file, RTLD_LAZY | RTLD_NOLOAD);
  if (library == nullptr) return nullptr;
  void* found = real_dlsym(library, symbol);
  ::dlclose(library);
  return found;
}

// `symbol` in the library holding the real nvrtcCreateProgram, else in a libnvrtc loaded where
// RTLD_NEXT does not look. Rationale: a call that reached a wrapper must reach NVRTC, whoever loaded it.
void* in_nvrtc(const char* symbol) {
  void* found = nullptr;
  Dl_info info{};
  void* create = resolve_real(k_nvrtc_hooks[k_create]);
  if (create != nullptr && ::dladdr(create, &info) != 0 && info.dli_fname != nullptr) {
    found = find_in_loaded(info.dli_fname, symbol);
  }
  for (const char* soname : {"libnvrtc.so.13", "libnvrtc.so.12"}) {
    if (found == nullptr) found = find_in_loaded(soname, symbol);
  }
  return found;
}

void* real_of(Function function) {
  const Hook& hook = k_nvrtc_hooks[function];
  if (void* found = resolve_real(hook)) return found;
  void* found = in_nvrtc(hook.symbol);
  if (found == nullptr || !adopt_real(hook, found)) return resolve_real(hook);
  return found;
}

jnvrtc::NvrtcEntryPoints entry_points() {
  jnvrtc::NvrtcEntryPoints real;
  real.create = reinterpret_cast<decltype(real.create)>(real_of(k_create));
  real.destroy = reinterpret_cast<decltype(real.destroy)>(real_of(k_destroy));
  real.add_name_expression = reinterpret_cast<decltype(real.add_name_expression)>(real_of(k_add_name));
  real.compile = reinterpret_cast<decltype(real.compile)>(real_of(k_compile));
  real.get_lowered_name = reinterpret_cast<decltype(real.get_lowered_name)>(real_of(k_lowered));
  // nvrtcVersion is not hooked (every user asks for it): found beside the real compile.
  void* version = g_version.load(std::memory_order_acquire);
  Dl_info info{};
  if (version == nullptr && real.compile != nullptr && ::dladdr(reinterpret_cast<void*>(real.compile), &info) != 0 &&
      info.dli_fname != nullptr) {
    version = find_in_loaded(info.dli_fname, "nvrtcVersion");
    if (version != nullptr) g_version.store(version, std::memory_order_release);
  }
  real.version = reinterpret_cast<decltype(real.version)>(version);
  for (std::size_t i = 0; i < 5; ++i) {
    real.size_of[i] = reinterpret_cast<jnvrtc::SizeCall>(real_of(static_cast<Function>(k_log_size + 2 * i)));
    real.bytes_of[i] = reinterpret_cast<jnvrtc::BytesCall>(real_of(static_cast<Function>(k_log + 2 * i)));
  }
  return real;
}

}  // namespace

}  // namespace jitcache::client::preload

namespace preload = jitcache::client::preload;
namespace jnvrtc = jitcache::client::nvrtc;
using jitcache::proto::NvrtcOutput;

// A function the library lacks answers NVRTC_ERROR_INTERNAL_ERROR (a program cannot have bound it).
#define JITCACHE_NVRTC_OUTPUT(SIZE_NAME, BYTES_NAME, WHICH)                                           \
  nvrtcResult SIZE_NAME(nvrtcProgram program, size_t* size) {                                         \
    const jnvrtc::NvrtcEntryPoints real = preload::entry_points();                                    \
    if (real.size_of[static_cast<std::size_t>(WHICH)] == nullptr) return NVRTC_ERROR_INTERNAL_ERROR;  \
    return jnvrtc::nvrtc_output_size(real, program, WHICH, size);                                     \
  }                                                                                                   \
  nvrtcResult BYTES_NAME(nvrtcProgram program, char* out) {                                           \
    const jnvrtc::NvrtcEntryPoints real = preload::entry_points();                                    \
    if (real.bytes_of[static_cast<std::size_t>(WHICH)] == nullptr) return NVRTC_ERROR_INTERNAL_ERROR; \
    return jnvrtc::nvrtc_output_bytes(real, program, WHICH, out);                                     \
  }

extern "C" {
#pragma GCC visibility push(default)

nvrtcResult nvrtcCreateProgram(nvrtcProgram* program, const char* source, const char* name, int header_count,
                               const char* const* headers, const char* const* include_names) {
  const jnvrtc::NvrtcEntryPoints real = preload::entry_points();
  if (real.create == nullptr) return NVRTC_ERROR_INTERNAL_ERROR;
  if (preload::preload_disabled()) return real.create(program, source, name, header_count, headers, include_names);
  return jnvrtc::nvrtc_create(real, program, source, name, header_count, headers, include_names);
}

nvrtcResult nvrtcDestroyProgram(nvrtcProgram* program) {
  const jnvrtc::NvrtcEntryPoints real = preload::entry_points();
  if (real.destroy == nullptr) return NVRTC_ERROR_INTERNAL_ERROR;
  return jnvrtc::nvrtc_destroy(real, program);
}

nvrtcResult nvrtcAddNameExpression(nvrtcProgram program, const char* expression) {
  const jnvrtc::NvrtcEntryPoints real = preload::entry_points();
  if (real.add_name_expression == nullptr) return NVRTC_ERROR_INTERNAL_ERROR;
  return jnvrtc::nvrtc_add_name_expression(real, program, expression);
}

nvrtcResult nvrtcCompileProgram(nvrtcProgram program, int count, const char* const* options) {
  const jnvrtc::NvrtcEntryPoints real = preload::entry_points();
  if (real.compile == nullptr) return NVRTC_ERROR_INTERNAL_ERROR;
  return jnvrtc::nvrtc_compile(real, program, count, options);
}

nvrtcResult nvrtcGetLoweredName(nvrtcProgram program, const char* expression, const char** lowered) {
  const jnvrtc::NvrtcEntryPoints real = preload::entry_points();
  if (real.get_lowered_name == nullptr) return NVRTC_ERROR_INTERNAL_ERROR;
  return jnvrtc::nvrtc_lowered_name(real, program, expression, lowered);
}

JITCACHE_NVRTC_OUTPUT(nvrtcGetProgramLogSize, nvrtcGetProgramLog, NvrtcOutput::log)
JITCACHE_NVRTC_OUTPUT(nvrtcGetPTXSize, nvrtcGetPTX, NvrtcOutput::ptx)
JITCACHE_NVRTC_OUTPUT(nvrtcGetCUBINSize, nvrtcGetCUBIN, NvrtcOutput::cubin)
JITCACHE_NVRTC_OUTPUT(nvrtcGetLTOIRSize, nvrtcGetLTOIR, NvrtcOutput::ltoir)
JITCACHE_NVRTC_OUTPUT(nvrtcGetOptiXIRSize, nvrtcGetOptiXIR, NvrtcOutput::optixir)

#pragma GCC visibility pop
}  // extern "C"

#undef JITCACHE_NVRTC_OUTPUT

namespace jitcache::client::preload {

namespace {

#define JITCACHE_NVRTC_HOOK(NAME, FUNCTION) \
  Hook { #NAME, nullptr, 0, HookedLibrary::nvrtc, reinterpret_cast < void*>(&NAME), &g_real[FUNCTION] }

// Not reachable through cuGetProcAddress (base nullptr): NVRTC is not the driver.
const Hook k_nvrtc_hooks[k_functions] = {
    JITCACHE_NVRTC_HOOK(nvrtcCreateProgram, k_create),
    JITCACHE_NVRTC_HOOK(nvrtcDestroyProgram, k_destroy),
    JITCACHE_NVRTC_HOOK(nvrtcAddNameExpression, k_add_name),
    JITCACHE_NVRTC_HOOK(nvrtcCompileProgram, k_compile),
    JITCACHE_NVRTC_HOOK(nvrtcGetLoweredName, k_lowered),
    JITCACHE_NVRTC_HOOK(nvrtcGetProgramLogSize, k_log_size),
    JITCACHE_NVRTC_HOOK(nvrtcGetProgramLog, k_log),
    JITCACHE_NVRTC_HOOK(nvrtcGetPTXSize, k_ptx_size),
    JITCACHE_NVRTC_HOOK(nvrtcGetPTX, k_ptx),
    JITCACHE_NVRTC_HOOK(nvrtcGetCUBINSize, k_cubin_size),
    JITCACHE_NVRTC_HOOK(nvrtcGetCUBIN, k_cubin),
    JITCACHE_NVRTC_HOOK(nvrtcGetLTOIRSize, k_ltoir_size),
    JITCACHE_NVRTC_HOOK(nvrtcGetLTOIR, k_ltoir),
    JITCACHE_NVRTC_HOOK(nvrtcGetOptiXIRSize, k_optixir_size),
    JITCACHE_NVRTC_HOOK(nvrtcGetOptiXIR, k_optixir),
};

#undef JITCACHE_NVRTC_HOOK

}  // namespace

std::span<const Hook> nvrtc_hooks() { return k_nvrtc_hooks; }

}  // namespace jitcache::client::preload
