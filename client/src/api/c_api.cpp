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
#include <string_view>

#include <client/src/api/cached_load.hpp>
#include <client/src/api/module_file.hpp>
#include <client/src/driver/cu_result_text.hpp>
#include <client/src/loader/client_runtime.hpp>
#include <client/src/loader/load_names.hpp>
#include <client/src/loader/load_record.hpp>
#include <client/src/loader/process_report.hpp>

using jitcache::client::loader::CallerOptions;
using jitcache::client::loader::ClientRuntime;
using jitcache::client::loader::LoadRecord;
using jitcache::client::loader::ProcessReport;

namespace {

// The first version of each caller-sized struct: the smallest struct_size accepted. The load info
// up to ns_total is what 0.1.0 declared; ns_setup came after.
constexpr std::size_t k_min_load_info_size = offsetof(jitcache_load_info, ns_total) + sizeof(uint64_t);
// The counters up to corrupt_replies: what version 0.1.0 of this header declared. A caller built
// against it gets those; fields added since are written only into a struct that has them.
constexpr std::size_t k_min_counters_size = offsetof(jitcache_counters, corrupt_replies) + sizeof(uint64_t);
// The config up to quiet: what 0.1.0 declared (compile_timeout_ms came after).
constexpr std::size_t k_min_config_size = offsetof(jitcache_config, quiet) + sizeof(int);

// The names the process report gives the exported load functions (process_report.hpp).
constexpr std::string_view k_load_data_ex = "jitcache_module_load_data_ex";
constexpr std::string_view k_load_data = "jitcache_module_load_data";
constexpr std::string_view k_load_file = "jitcache_module_load";

CUresult load_with_cache(CUmodule* module, const void* image, unsigned num_options, CUjit_option* options,
                         void** option_values, std::string_view entry_point) {
  jitcache::client::api::CachedLoadCall call{image, num_options, options, option_values};
  call.entry_point = entry_point;
  return jitcache::client::api::cached_load(call, [module](const auto& api, const CallerOptions&) {
    return std::make_unique<jitcache::client::loader::ModuleTarget>(api, module);
  });
}

}  // namespace

extern "C" {

JITCACHE_API CUresult jitcache_module_load_data_ex(CUmodule* module, const void* image, unsigned int num_options,
                                                   CUjit_option* options, void** option_values) {
  try {
    return load_with_cache(module, image, num_options, options, option_values, k_load_data_ex);
  } catch (...) {
    return CUDA_ERROR_UNKNOWN;  // only reachable if even the record could not be built (no memory)
  }
}

JITCACHE_API CUresult jitcache_module_load_data(CUmodule* module, const void* image) {
  try {
    return load_with_cache(module, image, 0, nullptr, nullptr, k_load_data);
  } catch (...) {
    return CUDA_ERROR_UNKNOWN;
  }
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
      ProcessReport::note(record.info(), k_load_file, ClientRuntime::instance().daemon()->settings().quiet);
      return CUDA_ERROR_FILE_NOT_FOUND;
    }
    return load_with_cache(module, contents->data(), 0, nullptr, nullptr, k_load_file);
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
  return jitcache::client::loader::outcome_name(outcome).data();
}

JITCACHE_API const char* jitcache_stage_name(jitcache_load_stage stage) {
  return jitcache::client::loader::stage_words(stage).data();
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
