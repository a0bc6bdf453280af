// jitcache_preload_core_attach: how the shim (client/src/preload_shim/) takes this core into
// service, and the tables both sides index by hooked_names.h. The core's own functions are the
// hooks of module_hooks.cpp, library_hooks.cpp, link_hooks.cpp, nvjitlink_hooks.cpp and
// proc_address_hooks.cpp, and libjitcache's C API (api/c_api.cpp); a program is handed the shim's
// stub for each, which jumps here.
// Thread safety: see shim_link.hpp; the tables are built once, under a function-local static.
#include <client/src/loader/stderr_line.hpp>
#include <client/src/preload/shim_link.hpp>

#include <client/src/preload_shim/hooked_names.h>
#include <jitcache/jitcache.h>
#include <jitcache/nvrtc.h>

#include <array>
#include <atomic>
#include <cstring>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <client/src/preload/real_symbols.hpp>
#include <client/src/preload/symbol_routes.hpp>

// Dynamic cudart's resolvers, defined in proc_address_hooks.cpp (hidden in this object).
extern "C" {
int cudaGetDriverEntryPoint(const char*, void**, unsigned long long, int*);
int cudaGetDriverEntryPoint_ptsz(const char*, void**, unsigned long long, int*);
int cudaGetDriverEntryPointByVersion(const char*, void**, unsigned int, unsigned long long, int*);
int cudaGetDriverEntryPointByVersion_ptsz(const char*, void**, unsigned int, unsigned long long, int*);
}

namespace jitcache::client::preload {

namespace {

struct Tables {
  std::array<void*, JITCACHE_HOOKED_NAME_COUNT> entries{};
  std::unordered_map<std::string_view, const Hook*> by_symbol;
  std::unordered_map<std::string_view, std::vector<const Hook*>> by_base;
  std::unordered_map<const void*, const Hook*> by_address;
  std::unordered_map<const Hook*, void*> stubs;
  jitcache_core core{};
};

std::atomic<const jitcache_shim*> g_shim{nullptr};
std::atomic<const Tables*> g_tables{nullptr};

// The functions of the names that are no Hook: cudart's resolvers and the C API.
void* other_function(std::string_view name) {
  static const std::unordered_map<std::string_view, void*> k_functions = {
      {"cudaGetDriverEntryPoint", reinterpret_cast<void*>(&cudaGetDriverEntryPoint)},
      {"cudaGetDriverEntryPoint_ptsz", reinterpret_cast<void*>(&cudaGetDriverEntryPoint_ptsz)},
      {"cudaGetDriverEntryPointByVersion", reinterpret_cast<void*>(&cudaGetDriverEntryPointByVersion)},
      {"cudaGetDriverEntryPointByVersion_ptsz", reinterpret_cast<void*>(&cudaGetDriverEntryPointByVersion_ptsz)},
      {"jitcache_module_load_data_ex", reinterpret_cast<void*>(&jitcache_module_load_data_ex)},
      {"jitcache_module_load_data", reinterpret_cast<void*>(&jitcache_module_load_data)},
      {"jitcache_module_load", reinterpret_cast<void*>(&jitcache_module_load)},
      {"jitcache_module_unload", reinterpret_cast<void*>(&jitcache_module_unload)},
      {"jitcache_last_load_info", reinterpret_cast<void*>(&jitcache_last_load_info)},
      {"jitcache_outcome_name", reinterpret_cast<void*>(&jitcache_outcome_name)},
      {"jitcache_stage_name", reinterpret_cast<void*>(&jitcache_stage_name)},
      {"jitcache_get_counters", reinterpret_cast<void*>(&jitcache_get_counters)},
      {"jitcache_driver_version", reinterpret_cast<void*>(&jitcache_driver_version)},
      {"jitcache_configure", reinterpret_cast<void*>(&jitcache_configure)},
      {"jitcache_nvrtc_create_program", reinterpret_cast<void*>(&jitcache_nvrtc_create_program)},
      {"jitcache_nvrtc_add_name_expression", reinterpret_cast<void*>(&jitcache_nvrtc_add_name_expression)},
      {"jitcache_nvrtc_compile_program", reinterpret_cast<void*>(&jitcache_nvrtc_compile_program)},
      {"jitcache_nvrtc_get_output_size", reinterpret_cast<void*>(&jitcache_nvrtc_get_output_size)},
      {"jitcache_nvrtc_get_output", reinterpret_cast<void*>(&jitcache_nvrtc_get_output)},
      {"jitcache_nvrtc_get_lowered_name", reinterpret_cast<void*>(&jitcache_nvrtc_get_lowered_name)},
      {"jitcache_nvrtc_destroy_program", reinterpret_cast<void*>(&jitcache_nvrtc_destroy_program)},
  };
  const auto found = k_functions.find(name);
  return found != k_functions.end() ? found->second : nullptr;
}

// What the program at `caller` is handed for a hooked name its dlsym/dlvsym found at `found`.
void* route(const char* name, void* found, const void* caller) {
  if (inside_preload(caller)) return own_resolver(name, found);
  void* routed = route_symbol(name, found);
  // libjitcache.so, loaded beside the preload by a program that links it, caches its loads itself.
  if (routed != found && inside_libjitcache(caller)) routed = own_resolver(name, found);
  return routed;
}

// nullptr when a name of the shim has no function here: a shim and a core of different builds.
const Tables* build(const jitcache_shim& shim) {
  auto* tables = new Tables;
  for (std::span<const Hook> table : hook_tables()) {
    for (const Hook& hook : table) {
      tables->by_symbol.emplace(hook.symbol, &hook);
      tables->by_address.emplace(hook.wrapper, &hook);
      if (hook.base != nullptr && hook.library == HookedLibrary::cuda) tables->by_base[hook.base].push_back(&hook);
    }
  }
  for (unsigned i = 0; i < shim.name_count; ++i) {
    const std::string_view name = shim.names[i];
    if (const auto hook = tables->by_symbol.find(name); hook != tables->by_symbol.end()) {
      tables->entries[i] = hook->second->wrapper;
      tables->stubs.emplace(hook->second, shim.stubs[i]);
      tables->by_address.emplace(shim.stubs[i], hook->second);
    } else {
      tables->entries[i] = other_function(name);
    }
    if (tables->entries[i] == nullptr) {
      delete tables;
      return nullptr;
    }
  }
  tables->core.entries = tables->entries.data();
  tables->core.route = &route;
  g_shim.store(&shim, std::memory_order_release);
  g_tables.store(tables, std::memory_order_release);
  return tables;
}

}  // namespace

const jitcache_shim& shim() { return *g_shim.load(std::memory_order_acquire); }

void* stub_of(const Hook& hook) {
  const Tables* tables = g_tables.load(std::memory_order_acquire);
  if (tables == nullptr) return nullptr;
  const auto found = tables->stubs.find(&hook);
  return found != tables->stubs.end() ? found->second : nullptr;
}

const Hook* hook_at(const void* address) {
  const Tables* tables = g_tables.load(std::memory_order_acquire);
  if (tables == nullptr || address == nullptr) return nullptr;
  const auto found = tables->by_address.find(address);
  return found != tables->by_address.end() ? found->second : nullptr;
}

const Hook* hook_named(const char* symbol) {
  const Tables* tables = g_tables.load(std::memory_order_acquire);
  if (tables == nullptr || symbol == nullptr) return nullptr;
  const auto found = tables->by_symbol.find(symbol);
  return found != tables->by_symbol.end() ? found->second : nullptr;
}

std::span<const Hook* const> hooks_of_base(const char* base) {
  // Rationale: cudart asks for hundreds of entry points at start; every base name a hook has starts
  // "cuModuleLoad", "cuLibrary", "cuLink" or "cuGetProcAddress", so the rest cost three compares.
  if (base == nullptr || base[0] != 'c' || base[1] != 'u' || (base[2] != 'M' && base[2] != 'L' && base[2] != 'G')) {
    return {};
  }
  const Tables* tables = g_tables.load(std::memory_order_acquire);
  if (tables == nullptr) return {};
  const auto found = tables->by_base.find(base);
  if (found == tables->by_base.end()) return {};
  return found->second;
}

}  // namespace jitcache::client::preload

extern "C" __attribute__((visibility("default"))) const jitcache_core* jitcache_preload_core_attach(
    const jitcache_shim* shim) {
  using namespace jitcache::client::preload;
  if (shim == nullptr || shim->version != JITCACHE_SHIM_INTERFACE_VERSION ||
      shim->name_count != JITCACHE_HOOKED_NAME_COUNT) {
    return nullptr;
  }
  unsigned long long device = 0;
  unsigned long long inode = 0;
  const bool stderr_open = shim->program_stderr(&device, &inode) != 0;
  jitcache::client::loader::adopt_program_stderr(stderr_open, device, inode);
  try {
    static const Tables* const tables = build(*shim);
    return tables != nullptr ? &tables->core : nullptr;
  } catch (...) {
    return nullptr;
  }
}
