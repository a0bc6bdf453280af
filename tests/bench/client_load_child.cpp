#include <tests/bench/client_load_child.hpp>

#include <unistd.h>

#include <chrono>
#include <iostream>
#include <thread>

#include <jitcache/jitcache.h>

#include <tests/support/gpu_driver.hpp>
#include <tests/support/ptx_entries.hpp>
#include <tests/support/temp_dir.hpp>

namespace jitcache::bench {

namespace {

using testing::GpuDriver;

int error(const std::string& what) {
  std::cout << "ERROR " << what << std::endl;
  return 1;
}

std::uint64_t elapsed_ns(std::chrono::steady_clock::time_point start) {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start).count());
}

}  // namespace

std::optional<ChildMode> parse_child_mode(std::string_view name) {
  for (ChildMode mode : {ChildMode::probe, ChildMode::jitcache, ChildMode::driver, ChildMode::cubin}) {
    if (name == child_mode_name(mode)) return mode;
  }
  return std::nullopt;
}

const char* child_mode_name(ChildMode mode) {
  switch (mode) {
    case ChildMode::probe: return "probe";
    case ChildMode::jitcache: return "jitcache";
    case ChildMode::driver: return "driver";
    case ChildMode::cubin: return "cubin";
  }
  return "unknown";
}

int run_client_load_child(const ChildRequest& request) {
  std::string ptx;
  std::string cubin;
  try {
    if (request.mode != ChildMode::probe) ptx = testing::read_file(request.module_path);
    if (request.mode == ChildMode::cubin) cubin = testing::read_file(request.cubin_path);
  } catch (const std::exception& failure) {
    return error(failure.what());
  }
  const auto kernels = testing::ptx_entry_names(ptx);
  if (request.mode != ChildMode::probe && kernels.empty()) return error(request.module_path + " defines no .entry");

  auto opened = testing::open_gpu();
  if (!opened) {
    std::cout << "SKIPPED: no usable GPU: " << opened.error().message << std::endl;
    return k_skip_status;
  }
  const GpuDriver& gpu = *opened;
  if (request.mode == ChildMode::probe) {
    std::cout << "GPU: " << gpu.device_name << " (sm_" << gpu.sm() << "), driver API " << gpu.api_version << ", "
              << gpu.library_file << std::endl;
    return 0;
  }

  if (!request.ready_file.empty()) {
    testing::write_file(request.ready_file, "ready");
    // Rationale: polling every 20 us keeps the children's start within a few tens of microseconds
    // of each other, against loads that take seconds.
    while (::access(request.start_file.c_str(), F_OK) != 0) std::this_thread::sleep_for(std::chrono::microseconds(20));
  }
  CUmodule module = nullptr;
  CUresult result = CUDA_ERROR_UNKNOWN;
  const auto start = std::chrono::steady_clock::now();
  switch (request.mode) {
    case ChildMode::jitcache: result = jitcache_module_load_data(&module, ptx.c_str()); break;
    case ChildMode::driver: result = gpu.module_load_data(&module, ptx.c_str()); break;
    case ChildMode::cubin: result = gpu.module_load_data(&module, cubin.data()); break;
    case ChildMode::probe: break;
  }
  const std::uint64_t ns = elapsed_ns(start);
  const auto end = std::chrono::steady_clock::now();

  jitcache_load_info info{};
  info.struct_size = sizeof(info);
  if (request.mode == ChildMode::jitcache) jitcache_last_load_info(&info);
  if (result != CUDA_SUCCESS) {
    return error(std::string(child_mode_name(request.mode)) + " load returned " + gpu.describe(result) +
                 (request.mode == ChildMode::jitcache ? std::string(": ") + info.reason : std::string()));
  }
  CUfunction function = nullptr;
  if (CUresult r = gpu.module_get_function(&function, module, kernels.front().c_str()); r != CUDA_SUCCESS) {
    return error("the loaded module has no " + kernels.front() + ": " + gpu.describe(r));
  }

  std::cout << "RESULT ns=" << ns;
  if (!request.ready_file.empty()) {
    std::cout << " start_ns=" << std::chrono::nanoseconds(start.time_since_epoch()).count()
              << " end_ns=" << std::chrono::nanoseconds(end.time_since_epoch()).count();
  }
  if (request.mode == ChildMode::jitcache) {
    jitcache_counters counters{};
    counters.struct_size = sizeof(counters);
    jitcache_get_counters(&counters);
    const char* hit_path = info.outcome != JITCACHE_OUTCOME_HIT ? "-"
                           : counters.published_hits > 0        ? "published"
                                                                : "socket";
    std::cout << " outcome=" << jitcache_outcome_name(info.outcome) << " hit_path=" << hit_path
              << " published_rejects=" << counters.published_rejects << " lookups=" << counters.lookups
              << " key=" << info.key_id << " ns_key=" << info.ns_key << " ns_lookup=" << info.ns_lookup
              << " ns_load=" << info.ns_load << " ns_compile=" << info.ns_compile << " ns_setup=" << info.ns_setup
              << " ns_classify=" << info.ns_classify << " ns_total=" << info.ns_total;
  }
  std::cout << std::endl;
  return 0;
}

}  // namespace jitcache::bench
