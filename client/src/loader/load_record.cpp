#include <client/src/loader/load_record.hpp>

#include <algorithm>
#include <cstring>

#include <client/src/driver/cu_result_text.hpp>

namespace jitcache::client::loader {

namespace {

jitcache_load_info no_load_yet() {
  jitcache_load_info info{};
  info.struct_size = sizeof(info);
  info.outcome = JITCACHE_OUTCOME_NONE;
  return info;
}

thread_local jitcache_load_info t_last_info = no_load_yet();

template <std::size_t N>
void copy_text(char (&field)[N], std::string_view text, std::size_t offset = 0) {
  if (offset >= N - 1) return;
  std::size_t n = std::min(text.size(), N - 1 - offset);
  std::memcpy(field + offset, text.data(), n);
  field[offset + n] = '\0';
}

}  // namespace

LoadRecord::LoadRecord() : m_start(std::chrono::steady_clock::now()) {
  m_info.struct_size = sizeof(jitcache_load_info);
  m_info.result = CUDA_SUCCESS;
  m_info.stage_result = CUDA_SUCCESS;
  copy_text(m_info.result_name, driver::static_result_name(CUDA_SUCCESS));
}

void LoadRecord::reason(std::string_view text) { copy_text(m_info.reason, text); }

void LoadRecord::append_reason(std::string_view text) { copy_text(m_info.reason, text, std::strlen(m_info.reason)); }

void LoadRecord::stage(jitcache_load_stage stage, CUresult result) {
  m_info.stage = stage;
  m_info.stage_result = result;
  copy_text(m_info.result_name, driver::static_result_name(result));
}

void LoadRecord::key(std::string_view key_id_hex, std::string_view arch) {
  copy_text(m_info.key_id, key_id_hex);
  copy_text(m_info.arch, arch);
}

float LoadRecord::elapsed_ms() const {
  return std::chrono::duration<float, std::milli>(std::chrono::steady_clock::now() - m_start).count();
}

void LoadRecord::finish(CUresult result) {
  m_info.result = result;
  if (result != CUDA_SUCCESS && m_info.stage_result == CUDA_SUCCESS) {
    copy_text(m_info.result_name, driver::static_result_name(result));
  }
  m_info.ns_total = static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - m_start).count());
  t_last_info = m_info;
}

const jitcache_load_info& last_load_info() { return t_last_info; }

}  // namespace jitcache::client::loader
