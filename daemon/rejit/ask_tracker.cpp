#include <daemon/rejit/ask_tracker.hpp>

namespace jitcache::daemon::rejit {

void AskTracker::know_driver(std::uint32_t driver_api, const std::string& driver_build) {
  std::lock_guard lock(m_mutex);
  m_drivers.emplace(driver_api, driver_build);
}

std::optional<Sighting> AskTracker::note(const std::string& arch, std::uint32_t driver_api,
                                         const std::string& driver_build, std::optional<std::uint32_t> asker) {
  std::lock_guard lock(m_mutex);
  auto pair = std::make_tuple(driver_api, driver_build, arch);
  if (m_pairs.count(pair) != 0 || m_pairs.size() >= m_max_pairs) return std::nullopt;
  if (asker) {
    std::size_t& added = m_pairs_of_uid[*asker];
    if (added >= m_max_pairs_per_uid) return std::nullopt;
    ++added;
  }
  m_pairs.insert(std::move(pair));
  const bool new_driver = m_drivers.emplace(driver_api, driver_build).second;
  return Sighting{arch, driver_api, driver_build, new_driver, asker};
}

}  // namespace jitcache::daemon::rejit
