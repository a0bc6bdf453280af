#include <daemon/store/driver_log.hpp>

#include <algorithm>

namespace jitcache::daemon::store {

void DriverLog::merge_locked(Times& times, std::size_t limit, std::uint32_t driver_api, const std::string& driver_build,
                             std::int64_t at_ms) {
  Driver driver{driver_api, driver_build};
  if (auto it = times.find(driver); it != times.end()) {
    it->second = std::max(it->second, at_ms);
    return;
  }
  if (times.size() >= limit) {
    ++m_dropped;
    return;
  }
  times.emplace(std::move(driver), at_ms);
}

void DriverLog::record_asked(std::uint32_t driver_api, const std::string& driver_build, std::int64_t now_ms) {
  std::lock_guard lock(m_mutex);
  merge_locked(m_asked, m_max_asked, driver_api, driver_build, now_ms);
}

void DriverLog::record_served(std::uint32_t driver_api, const std::string& driver_build, std::int64_t now_ms) {
  std::lock_guard lock(m_mutex);
  merge_locked(m_served, m_max_served, driver_api, driver_build, now_ms);
}

std::vector<DriverAsk> DriverLog::take() {
  Times asked;
  Times served;
  {
    std::lock_guard lock(m_mutex);
    asked.swap(m_asked);
    served.swap(m_served);
  }
  std::vector<DriverAsk> asks;
  asks.reserve(asked.size() + served.size());
  for (auto& [driver, at] : served) asks.push_back(DriverAsk{driver.first, driver.second, at, true});
  for (auto& [driver, at] : asked) asks.push_back(DriverAsk{driver.first, driver.second, at, false});
  return asks;
}

void DriverLog::restore(const std::vector<DriverAsk>& asks) {
  std::lock_guard lock(m_mutex);
  for (const auto& ask : asks) {
    if (ask.served) {
      merge_locked(m_served, m_max_served, ask.driver_api, ask.driver_build, ask.last_asked_at_ms);
    } else {
      merge_locked(m_asked, m_max_asked, ask.driver_api, ask.driver_build, ask.last_asked_at_ms);
    }
  }
}

std::size_t DriverLog::pending() const {
  std::lock_guard lock(m_mutex);
  return m_asked.size() + m_served.size();
}

std::uint64_t DriverLog::dropped() const {
  std::lock_guard lock(m_mutex);
  return m_dropped;
}

}  // namespace jitcache::daemon::store
