#include <tests/fakes/fake_cuda/counters.hpp>

#include <algorithm>
#include <cstring>

namespace jitcache::fakes::fake_cuda {

void Counters::set_last_error_log(std::string_view text) {
  const std::lock_guard lock(m_log_mutex);
  m_last_error_log.assign(text);
}

void Counters::snapshot(fake_cuda_counters& out, std::uint64_t modules_alive, std::uint64_t libraries_alive) const {
  out = fake_cuda_counters{};
  out.cubin_loads_ok = cubin_loads_ok.load();
  out.cubin_loads_failed = cubin_loads_failed.load();
  out.ptx_jit_compiles = ptx_jit_compiles.load();
  out.ptx_jit_failures = ptx_jit_failures.load();
  out.link_compiles = link_compiles.load();
  out.link_completes = link_completes.load();
  out.fatbin_loads = fatbin_loads.load();
  out.module_load_calls = module_load_calls.load();
  out.modules_alive = modules_alive;
  out.injected_failures = injected_failures.load();
  out.load_calls.module_load_data = load_calls.module_load_data.load();
  out.load_calls.module_load_data_ex = load_calls.module_load_data_ex.load();
  out.load_calls.module_load = load_calls.module_load.load();
  out.load_calls.module_load_fatbinary = load_calls.module_load_fatbinary.load();
  out.load_calls.library_load_data = load_calls.library_load_data.load();
  out.load_calls.library_load_from_file = load_calls.library_load_from_file.load();
  out.libraries_alive = libraries_alive;
  out.kernels_launched = kernels_launched.load();
  out.link_add_file_calls = link_add_file_calls.load();
  out.get_proc_address_calls = get_proc_address_calls.load();
  out.preserved_image_violations = preserved_image_violations.load();
  const std::lock_guard lock(m_log_mutex);
  const std::size_t n = std::min(m_last_error_log.size(), sizeof(out.last_error_log) - 1);
  std::memcpy(out.last_error_log, m_last_error_log.data(), n);
  out.last_error_log[n] = '\0';
}

void Counters::reset() {
  for (Counter* counter :
       {&cubin_loads_ok, &cubin_loads_failed, &ptx_jit_compiles, &ptx_jit_failures, &link_compiles, &link_completes,
        &fatbin_loads, &module_load_calls, &injected_failures, &load_calls.module_load_data,
        &load_calls.module_load_data_ex, &load_calls.module_load, &load_calls.module_load_fatbinary,
        &load_calls.library_load_data, &load_calls.library_load_from_file, &kernels_launched, &link_add_file_calls,
        &get_proc_address_calls, &preserved_image_violations}) {
    counter->store(0);
  }
  set_last_error_log({});
}

}  // namespace jitcache::fakes::fake_cuda
