#include <daemon/store/driver_log.hpp>

#include <algorithm>

namespace jitcache::daemon::store {

void DriverLog::merge_locked(std::uint32_t driver_api, const std::string& driver_build, std::int64_t at_ms) {
  auto [it, inserted] = m_asked.try_emplace({driver_api, driver_build}, at_ms);
  if (!inserted) it->second = std::max(it->second, at_ms);
}

void DriverLog::record(std::uint32_t driver_api, const std::string& driver_build, std::int64_t now_ms) {
  std::lock_guard lock(m_mutex);
  merge_locked(driver_api, driver_build, now_ms);
}

std::vector<DriverAsk> DriverLog::take() {
  std::map<std::pair<std::uint32_t, std::string>, std::int64_t> taken;
  {
    std::lock_guard lock(m_mutex);
    taken.swap(m_asked);
  }
  std::vector<DriverAsk> asks;
  asks.reserve(taken.size());
  for (auto& [driver, at] : taken) asks.push_back(DriverAsk{driver.first, driver.second, at});
  return asks;
}

void DriverLog::restore(const std::vector<DriverAsk>& asks) {
  std::lock_guard lock(m_mutex);
  for (const auto& ask : asks) merge_locked(ask.driver_api, ask.driver_build, ask.last_asked_at_ms);
}

}  // namespace jitcache::daemon::store
