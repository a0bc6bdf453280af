// The C API of <jitcache/jitcache.h>. Every function catches everything: an exception or a failure
// inside the cache must never reach the program, so the last resort of a load is the driver's own
// load with the caller's arguments.
#include <jitcache/jitcache.h>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <exception>
#include <memory>
#include <optional>

#include <client/src/api/cached_load.hpp>
#include <client/src/api/module_file.hpp>
#include <client/src/driver/cu_result_text.hpp>
#include <client/src/loader/client_runtime.hpp>
#include <client/src/loader/load_record.hpp>

using jitcache::client::loader::CallerOptions;
using jitcache::client::loader::ClientRuntime;
using jitcache::client::loader::LoadRecord;

namespace {

// The first version of each caller-sized struct: the smallest struct_size accepted. The load info
// up to ns_total is what 0.1.0 declared; ns_setup came after.
constexpr std::size_t k_min_load_info_size = offsetof(jitcache_load_info, ns_total) + sizeof(uint64_t);
// The counters up to corrupt_replies: what version 0.1.0 of this header declared. A caller built
// against it gets those; fields added since are written only into a struct that has them.
constexpr std::size_t k_min_counters_size = offsetof(jitcache_counters, corrupt_replies) + sizeof(uint64_t);
// The config up to quiet: what 0.1.0 declared (compile_timeout_ms came after).
constexpr std::size_t k_min_config_size = offsetof(jitcache_config, quiet) + sizeof(int);

}  // namespace

extern "C" {

JITCACHE_API CUresult jitcache_module_load_data_ex(CUmodule* module, const void* image, unsigned int num_options,
                                                   CUjit_option* options, void** option_values) {
  try {
    jitcache::client::api::CachedLoadCall call{image, num_options, options, option_values};
    return jitcache::client::api::cached_load(call, [module](const auto& api, const CallerOptions&) {
      return std::make_unique<jitcache::client::loader::ModuleTarget>(api, module);
    });
  } catch (...) {
    return CUDA_ERROR_UNKNOWN;  // only reachable if even the record could not be built (no memory)
  }
}

JITCACHE_API CUresult jitcache_module_load_data(CUmodule* module, const void* image) {
  return jitcache_module_load_data_ex(module, image, 0, nullptr, nullptr);
}

JITCACHE_API CUresult jitcache_module_load(CUmodule* module, const char* path) {
  try {
    auto contents = jitcache::client::api::read_module_file(path);
    if (!contents) {
      LoadRecord record;
      record.outcome(JITCACHE_OUTCOME_PASS_THROUGH);
      record.reason(contents.error().message);
      record.stage(JITCACHE_STAGE_IMAGE, CUDA_ERROR_FILE_NOT_FOUND);
      record.finish(CUDA_ERROR_FILE_NOT_FOUND);
      return CUDA_ERROR_FILE_NOT_FOUND;
    }
    return jitcache_module_load_data_ex(module, contents->data(), 0, nullptr, nullptr);
  } catch (...) {
    return CUDA_ERROR_UNKNOWN;
  }
}

JITCACHE_API CUresult jitcache_module_unload(CUmodule module) {
  try {
    const auto& api = ClientRuntime::instance().driver();
    if (!api || (*api)->module_unload == nullptr) return CUDA_ERROR_NOT_INITIALIZED;
    return (*api)->module_unload(module);
  } catch (...) {
    return CUDA_ERROR_UNKNOWN;
  }
}

JITCACHE_API int jitcache_last_load_info(jitcache_load_info* out) {
  if (out == nullptr || out->struct_size < k_min_load_info_size) return -1;
  const std::size_t caller_size = out->struct_size;
  const jitcache_load_info& last = jitcache::client::loader::last_load_info();
  std::memcpy(out, &last, std::min(caller_size, sizeof(last)));
  out->struct_size = caller_size;
  return 0;
}

JITCACHE_API const char* jitcache_outcome_name(jitcache_load_outcome outcome) {
  switch (outcome) {
    case JITCACHE_OUTCOME_NONE: return "none";
    case JITCACHE_OUTCOME_PASS_THROUGH: return "pass_through";
    case JITCACHE_OUTCOME_HIT: return "hit";
    case JITCACHE_OUTCOME_COMPILED_BY_DAEMON: return "compiled_by_daemon";
    case JITCACHE_OUTCOME_COMPILED_LOCALLY: return "compiled_locally";
    case JITCACHE_OUTCOME_REBUILT_AFTER_FAILED_LOAD: return "rebuilt_after_failed_load";
    case JITCACHE_OUTCOME_UNCACHED_FALLBACK: return "uncached_fallback";
  }
  return "unknown";
}

JITCACHE_API const char* jitcache_stage_name(jitcache_load_stage stage) {
  switch (stage) {
    case JITCACHE_STAGE_NONE: return "none";
    case JITCACHE_STAGE_IMAGE: return "no image for this device";
    case JITCACHE_STAGE_PTX_VERSION: return "PTX version";
    case JITCACHE_STAGE_JIT: return "JIT";
    case JITCACHE_STAGE_LOAD: return "relocation or resources";
    case JITCACHE_STAGE_CACHE: return "cache";
  }
  return "unknown";
}

JITCACHE_API int jitcache_get_counters(jitcache_counters* out) {
  if (out == nullptr || out->struct_size < k_min_counters_size) return -1;
  const std::size_t caller_size = out->struct_size;
  jitcache_counters snapshot = ClientRuntime::instance().counters().snapshot();
  std::memcpy(out, &snapshot, std::min(caller_size, sizeof(snapshot)));
  out->struct_size = caller_size;
  return 0;
}

JITCACHE_API int jitcache_driver_version(int* driver_api, int* built_against_api) {
  try {
    if (built_against_api != nullptr) *built_against_api = jitcache::client::driver::k_built_against_api;
    const auto& api = ClientRuntime::instance().driver();
    if (driver_api != nullptr) *driver_api = api ? (*api)->api_version : 0;
    return api ? static_cast<int>((*api)->missing.size()) : -1;
  } catch (...) {
    return -1;
  }
}

JITCACHE_API int jitcache_configure(const jitcache_config* config) {
  if (config != nullptr && config->struct_size < k_min_config_size) return -1;
  try {
    ClientRuntime::instance().configure(config);
    return 0;
  } catch (...) {
    return -1;
  }
}

}  // extern "C"
