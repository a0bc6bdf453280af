#include <client/src/driver/driver_api.hpp>

#include <dlfcn.h>

#include <array>
#include <cstdlib>

#include <client/src/driver/cu_result_text.hpp>
#include <client/src/driver/driver_identity.hpp>
#include <client/src/driver/entry_points.hpp>
#include <common/client_environment.hpp>

namespace jitcache::client::driver {

using common::ErrorCode;
using common::make_error;

namespace {

// CUDA 12.0+: with a status that tells "not found" from "needs a newer version".
using GetProcAddressV2 = CUresult (*)(const char*, void**, int, cuuint64_t, CUdriverProcAddressQueryResult*);
// CUDA 11.3-11.8: no status argument.
using GetProcAddressV1 = CUresult (*)(const char*, void**, int, cuuint64_t);

std::string api_text(int version) {
  return std::to_string(version / 1000) + "." + std::to_string((version % 1000) / 10);
}

std::string dl_error_text() {
  const char* text = ::dlerror();
  return text != nullptr ? text : "unknown dlopen error";
}

class Resolver {
 public:
  explicit Resolver(void* library) {
    m_v2 = reinterpret_cast<GetProcAddressV2>(::dlsym(library, "cuGetProcAddress_v2"));
    if (m_v2 == nullptr) m_v1 = reinterpret_cast<GetProcAddressV1>(::dlsym(library, "cuGetProcAddress"));
  }
  bool usable() const { return m_v2 != nullptr || m_v1 != nullptr; }

  // The entry point, or null with `why` saying what the driver answered.
  void* resolve(const EntryPoint& entry, std::string& why) const {
    void* pfn = nullptr;
    CUresult result = CUDA_SUCCESS;
    CUdriverProcAddressQueryResult status = CU_GET_PROC_ADDRESS_SUCCESS;
    if (m_v2 != nullptr) {
      result = m_v2(entry.name, &pfn, entry.version, CU_GET_PROC_ADDRESS_DEFAULT, &status);
    } else {
      result = m_v1(entry.name, &pfn, entry.version, CU_GET_PROC_ADDRESS_DEFAULT);
    }
    if (result == CUDA_SUCCESS && status == CU_GET_PROC_ADDRESS_SUCCESS && pfn != nullptr) return pfn;
    why = std::string(entry.name) + " (CUDA " + api_text(entry.version) + " API, asked as version " +
          std::to_string(entry.version) + "): ";
    if (result != CUDA_SUCCESS) {
      why += "cuGetProcAddress returned " + std::string(static_result_name(result));
    } else if (status == CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT) {
      why += "this driver's version of it is newer than the one asked for";
    } else {
      why += "not found in this driver";
    }
    return nullptr;
  }

 private:
  GetProcAddressV2 m_v2 = nullptr;
  GetProcAddressV1 m_v1 = nullptr;
};

template <class Fn>
void assign(Fn& target, void* pfn) {
  target = reinterpret_cast<Fn>(pfn);
}

void store(DriverApi& api, std::size_t slot, void* pfn) {
  switch (slot) {
    case k_driver_get_version: assign(api.driver_get_version, pfn); break;
    case k_get_error_name: assign(api.get_error_name, pfn); break;
    case k_get_error_string: assign(api.get_error_string, pfn); break;
    case k_ctx_get_device: assign(api.ctx_get_device, pfn); break;
    case k_device_get_attribute: assign(api.device_get_attribute, pfn); break;
    case k_module_load_data: assign(api.module_load_data, pfn); break;
    case k_module_load_data_ex: assign(api.module_load_data_ex, pfn); break;
    case k_module_unload: assign(api.module_unload, pfn); break;
    case k_link_create: assign(api.link_create, pfn); break;
    case k_link_add_data: assign(api.link_add_data, pfn); break;
    case k_link_complete: assign(api.link_complete, pfn); break;
    case k_link_destroy: assign(api.link_destroy, pfn); break;
    case k_device_get: assign(api.device_get, pfn); break;
    case k_device_get_count: assign(api.device_get_count, pfn); break;
    case k_library_load_data: assign(api.library_load_data, pfn); break;
    case k_library_unload: assign(api.library_unload, pfn); break;
    case k_library_load_from_file: assign(api.library_load_from_file, pfn); break;
    case k_library_get_kernel_count: assign(api.library_get_kernel_count, pfn); break;
    default: break;
  }
}

}  // namespace

std::string DriverApi::missing_summary() const {
  std::string text;
  for (const auto& line : missing) text += (text.empty() ? "" : "; ") + line;
  return text;
}

std::string default_driver_path() { return common::client_env("JITCACHE_CUDA_DRIVER").value_or("libcuda.so.1"); }

common::Result<std::shared_ptr<const DriverApi>> open_driver(const std::string& path) {
  // Rationale: RTLD_LOCAL keeps the driver's symbols out of the global namespace; if the program
  // already loaded libcuda.so.1 this returns that same instance, so modules and contexts agree.
  void* library = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    return make_error(ErrorCode::unavailable, "cannot open the CUDA driver \"" + path + "\": " + dl_error_text());
  }
  Resolver resolver(library);
  if (!resolver.usable()) {
    return make_error(ErrorCode::unavailable, "\"" + path + "\" has no cuGetProcAddress (CUDA 11.3 API or later): " +
                                                  "not a usable CUDA driver");
  }

  auto api = std::make_shared<DriverApi>();
  for (const EntryPoint& entry : k_entry_points) {
    std::string why;
    void* pfn = resolver.resolve(entry, why);
    if (pfn == nullptr) {
      if (!entry.optional) api->missing.push_back(std::move(why));
      continue;
    }
    store(*api, entry.slot, pfn);
  }
  if (api->driver_get_version == nullptr) {
    return make_error(ErrorCode::unavailable, "\"" + path + "\": " + api->missing_summary());
  }
  if (CUresult r = api->driver_get_version(&api->api_version); r != CUDA_SUCCESS) {
    return make_error(ErrorCode::unavailable,
                      "\"" + path + "\": cuDriverGetVersion returned " + std::string(static_result_name(r)) +
                          (r == CUDA_ERROR_STUB_LIBRARY ? " (the toolkit's stub, not a driver)" : ""));
  }
  if (!api->missing.empty()) {
    // Say which side is older: a driver behind the headers we were built with explains a gap.
    const std::string versions = " (driver API " + std::to_string(api->api_version) + ", libjitcache built against " +
                                 std::to_string(k_built_against_api) + ")";
    for (auto& line : api->missing) line += versions;
  }
  DriverIdentity identity = identify_driver(reinterpret_cast<void*>(api->driver_get_version));
  api->library_path = std::move(identity.library_path);
  api->build = std::move(identity.build);
  return std::shared_ptr<const DriverApi>(std::move(api));
}

}  // namespace jitcache::client::driver
