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

  void set_last_error_log(std::string_view text);
  // modules_alive comes from the module registry, which owns the handles.
  void snapshot(fake_cuda_counters& out, std::uint64_t modules_alive) const;
  void reset();

 private:
  mutable std::mutex m_log_mutex;
  std::string m_last_error_log;
};

}  // namespace jitcache::fakes::fake_cuda
