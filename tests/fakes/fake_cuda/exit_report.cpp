#include <tests/fakes/fake_cuda/exit_report.hpp>

#include <tests/fakes/fake_cuda/fake_driver.hpp>

#include <nlohmann/json.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>

namespace jitcache::fakes::fake_cuda {
namespace {

using Json = nlohmann::json;

const char* kind_name(int kind) {
  switch (kind) {
    case FAKE_CUDA_IMAGE_CUBIN: return "cubin";
    case FAKE_CUDA_IMAGE_PTX: return "ptx";
    case FAKE_CUDA_IMAGE_FATBIN: return "fatbin";
    default: return "none";
  }
}

Json counters_json(const fake_cuda_counters& c) {
  return Json{
      {"cubin_loads_ok", c.cubin_loads_ok},
      {"cubin_loads_failed", c.cubin_loads_failed},
      {"ptx_jit_compiles", c.ptx_jit_compiles},
      {"ptx_jit_failures", c.ptx_jit_failures},
      {"link_compiles", c.link_compiles},
      {"link_completes", c.link_completes},
      {"fatbin_loads", c.fatbin_loads},
      {"module_load_calls", c.module_load_calls},
      {"modules_alive", c.modules_alive},
      {"injected_failures", c.injected_failures},
      {"load_calls",
       {{"module_load_data", c.load_calls.module_load_data},
        {"module_load_data_ex", c.load_calls.module_load_data_ex},
        {"module_load", c.load_calls.module_load},
        {"module_load_fatbinary", c.load_calls.module_load_fatbinary},
        {"library_load_data", c.load_calls.library_load_data},
        {"library_load_from_file", c.load_calls.library_load_from_file}}},
      {"libraries_alive", c.libraries_alive},
      {"kernels_launched", c.kernels_launched},
      {"link_add_file_calls", c.link_add_file_calls},
      {"get_proc_address_calls", c.get_proc_address_calls},
      {"preserved_image_violations", c.preserved_image_violations},
      // Logs are compiler output: keep whatever bytes they hold rather than fail on invalid UTF-8.
      {"last_error_log", Json(std::string(c.last_error_log))},
  };
}

void write_report_at_exit() {
  const std::string path = FakeDriver::instance().settings.get().report_path;
  if (path.empty()) return;
  const std::string line = exit_report_line() + "\n";
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) {
    warn("FAKE_CUDA_REPORT: cannot open '" + path + "'");
    return;
  }
  if (::write(fd, line.data(), line.size()) != static_cast<ssize_t>(line.size())) {
    warn("FAKE_CUDA_REPORT: cannot write '" + path + "'");
  }
  ::close(fd);
}

// Rationale: registered when the library is loaded, whatever the environment says then, so a
// program that never calls the driver still reports (all zeros), and a test may set the variable
// later (fake_cuda_reload_environment). glibc runs a shared object's atexit handlers at its dlclose
// too, so the handler never outlives the code it points at.
[[gnu::constructor]] void register_exit_report() { std::atexit(write_report_at_exit); }

}  // namespace

std::string exit_report_line() {
  FakeDriver& driver = FakeDriver::instance();
  fake_cuda_counters counters{};
  driver.counters.snapshot(counters, driver.modules.alive(), driver.libraries.alive());
  Json report{{"pid", static_cast<long long>(::getpid())}, {"counters", counters_json(counters)}};

  fake_cuda_image_info image{};
  if (driver.images.last(image)) {
    report["last_image"] = Json{{"kind", kind_name(image.kind)},
                                {"complete", image.complete != 0},
                                {"fatbin_wrapper", image.fatbin_wrapper != 0},
                                {"size", image.size},
                                {"sha256", std::string(image.sha256_hex)},
                                {"entry_point", std::string(image.entry_point)},
                                {"sequence", image.sequence}};
  } else {
    report["last_image"] = nullptr;
  }
  fake_cuda_launch launch{};
  if (driver.launches.last(launch)) {
    report["last_launch"] = Json{{"kernel_name", std::string(launch.kernel_name)},
                                 {"grid", {launch.grid[0], launch.grid[1], launch.grid[2]}},
                                 {"block", {launch.block[0], launch.block[1], launch.block[2]}},
                                 {"shared_mem_bytes", launch.shared_mem_bytes},
                                 {"through_kernel_handle", launch.through_kernel_handle != 0},
                                 {"sequence", launch.sequence}};
  } else {
    report["last_launch"] = nullptr;
  }
  return report.dump(-1, ' ', false, Json::error_handler_t::replace);
}

}  // namespace jitcache::fakes::fake_cuda
