// What the fake driver was asked to do, for tests to assert on (fake_cuda_get_counters).
//
// Thread safety: the counters are atomics, bumped from whichever thread is inside a driver entry
// point; the last error log is a string under its own mutex. A snapshot reads each counter once.
#pragma once

#include <tests/fakes/fake_cuda/fake_cuda_control.h>

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>

namespace jitcache::fakes::fake_cuda {

class Counters {
 public:
  using Counter = std::atomic<std::uint64_t>;

  Counter cubin_loads_ok{0};
  Counter cubin_loads_failed{0};
  Counter ptx_jit_compiles{0};
  Counter ptx_jit_failures{0};
  Counter link_compiles{0};
  Counter link_completes{0};
  Counter fatbin_loads{0};
  Counter module_load_calls{0};
  Counter injected_failures{0};
  struct LoadCalls {
    Counter module_load_data{0};
    Counter module_load_data_ex{0};
    Counter module_load{0};
    Counter module_load_fatbinary{0};
    Counter library_load_data{0};
    Counter library_load_from_file{0};
  } load_calls;
  Counter kernels_launched{0};
  Counter link_add_file_calls{0};
  Counter get_proc_address_calls{0};
  Counter preserved_image_violations{0};

  void set_last_error_log(std::string_view text);
  // The live-handle counts come from the registries, which own the handles.
  void snapshot(fake_cuda_counters& out, std::uint64_t modules_alive, std::uint64_t libraries_alive) const;
  void reset();

 private:
  mutable std::mutex m_log_mutex;
  std::string m_last_error_log;
};

}  // namespace jitcache::fakes::fake_cuda
