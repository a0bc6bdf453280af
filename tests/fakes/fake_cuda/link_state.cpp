#include <tests/fakes/fake_cuda/link_state.hpp>

#include <tests/fakes/fake_cuda/ptx_jit.hpp>

#include <chrono>

namespace jitcache::fakes::fake_cuda {
namespace {

class Stopwatch {
 public:
  float milliseconds() const {
    return std::chrono::duration<float, std::milli>(std::chrono::steady_clock::now() - m_start).count();
  }

 private:
  std::chrono::steady_clock::time_point m_start = std::chrono::steady_clock::now();
};

void append_line(std::string& log, std::string_view text) {
  if (text.empty()) return;
  if (!log.empty() && log.back() != '\n') log += '\n';
  log += text;
}

}  // namespace

LinkState::LinkState(const JitRequest& request, const fb::Arch& target)
    : m_request(request), m_linker(target, request.compiler_options) {}

CUresult LinkState::create_status() const { return result_for_nvjitlink(m_linker.create_result(), true, {}); }

CUresult LinkState::add_ptx(std::string_view ptx, const char* name, const fb::PtxIsa& max_isa, Counters& counters) {
  const Stopwatch stopwatch;
  if (const auto header = read_ptx_header(ptx)) {
    // The ISA check is the driver's own; a `.target` the link's target cannot take is left to the
    // compiler, which reports it in its log.
    if (auto failure = check_ptx_version(*header, max_isa)) {
      add_wall_time(stopwatch.milliseconds());
      return failed(failure->code, failure->log);
    }
  }
  counters.link_compiles.fetch_add(1);
  const auto bytes = std::as_bytes(std::span(ptx.data(), ptx.size()));
  const nvJitLinkResult result = m_linker.add(NVJITLINK_INPUT_PTX, bytes, name);
  add_wall_time(stopwatch.milliseconds());
  append_line(m_info_log, m_linker.info_log());
  if (result != NVJITLINK_SUCCESS) {
    std::string log = m_linker.error_log();
    if (log.empty()) log = "nvJitLinkAddData failed (" + std::to_string(result) + ")";
    return failed(result_for_nvjitlink(result, true, log), log);
  }
  m_has_input = true;
  publish_logs();
  return CUDA_SUCCESS;
}

CUresult LinkState::add_binary(nvJitLinkInputType type, std::span<const std::byte> data, const char* name) {
  const Stopwatch stopwatch;
  const nvJitLinkResult result = m_linker.add(type, data, name);
  add_wall_time(stopwatch.milliseconds());
  if (result != NVJITLINK_SUCCESS) {
    std::string log = m_linker.error_log();
    if (log.empty()) log = "nvJitLinkAddData failed (" + std::to_string(result) + ")";
    return failed(result_for_nvjitlink(result, false, log), log);
  }
  m_has_input = true;
  publish_logs();
  return CUDA_SUCCESS;
}

CUresult LinkState::complete(void** cubin_out, std::size_t* size_out, Counters& counters) {
  if (cubin_out == nullptr || size_out == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (m_failure) return *m_failure;
  if (!m_completed) {
    if (!m_has_input) return failed(CUDA_ERROR_INVALID_VALUE, "cuLinkComplete: nothing was added to the link");
    const Stopwatch stopwatch;
    const nvJitLinkResult result = m_linker.complete();
    add_wall_time(stopwatch.milliseconds());
    append_line(m_info_log, m_linker.info_log());
    if (result != NVJITLINK_SUCCESS) {
      std::string log = m_linker.error_log();
      if (log.empty()) log = "nvJitLinkComplete failed (" + std::to_string(result) + ")";
      return failed(result_for_nvjitlink(result, true, log), log);
    }
    m_completed = true;
    counters.link_completes.fetch_add(1);
    publish_logs();
  }
  *cubin_out = const_cast<std::byte*>(m_linker.cubin().data());
  *size_out = m_linker.cubin().size();
  return CUDA_SUCCESS;
}

CUresult LinkState::refuse(CUresult code, std::string_view reason) { return failed(code, reason); }

CUresult LinkState::fail(CUresult code, std::string_view point) {
  // Not sticky: an injected failure models one call failing, and a retry may succeed.
  append_line(m_error_log, "fake_cuda: injected failure at " + std::string(point) + " (" + std::to_string(code) + ")");
  publish_logs();
  return code;
}

CUresult LinkState::failed(CUresult code, std::string_view log) {
  append_line(m_error_log, log);
  if (!m_failure) m_failure = code;
  publish_logs();
  return code;
}

void LinkState::add_wall_time(float milliseconds) {
  m_wall_ms += milliseconds;
  write_wall_time(m_request.wall_time_slot, m_wall_ms);
}

void LinkState::publish_logs() const {
  write_log(m_request.error_log, m_error_log);
  write_log(m_request.info_log, m_info_log);
}

CUlinkState LinkRegistry::add(std::unique_ptr<LinkState> state) {
  auto* handle = reinterpret_cast<CUlinkState>(state.get());
  const std::lock_guard lock(m_mutex);
  m_states.emplace(handle, std::move(state));
  return handle;
}

LinkState* LinkRegistry::find(CUlinkState handle) const {
  const std::lock_guard lock(m_mutex);
  const auto found = m_states.find(handle);
  return found == m_states.end() ? nullptr : found->second.get();
}

CUresult LinkRegistry::remove(CUlinkState handle) {
  const std::lock_guard lock(m_mutex);
  return m_states.erase(handle) == 1 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

}  // namespace jitcache::fakes::fake_cuda
