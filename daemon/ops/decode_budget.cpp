#include <daemon/ops/decode_budget.hpp>

#include <string>

namespace jitcache::daemon::ops {

common::Result<void> DecodeBudget::charge(uid_t uid, std::uint64_t bytes, Clock::time_point now) {
  if (m_limit == 0) return {};
  std::lock_guard lock(m_mutex);
  // Windows that ended are forgotten, so the map holds only the uids of the last hour.
  std::erase_if(m_windows, [&](const auto& item) { return now - item.second.start >= k_window; });
  Window& window = m_windows.try_emplace(uid, Window{now, 0}).first->second;
  if (bytes > m_limit - window.bytes) {
    const auto left = std::chrono::duration_cast<std::chrono::minutes>(window.start + k_window - now).count() + 1;
    return common::make_error(common::ErrorCode::too_large,
                              "uid " + std::to_string(uid) + " has had " + std::to_string(window.bytes) +
                                  " bytes of bundle images decoded this hour; " + std::to_string(bytes) +
                                  " more would pass bundle_decoded_per_uid (" + std::to_string(m_limit) +
                                  " bytes an hour): try again in " + std::to_string(left) + " minutes");
  }
  window.bytes += bytes;
  return {};
}

}  // namespace jitcache::daemon::ops
