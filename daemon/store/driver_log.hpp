// When clients last asked for each driver (driver_api, driver_build), kept in memory until the store
// writes it to the drivers table with the hit counts (schema/0004_driver_usage.sql). A LOOKUP,
// COMPILE or PUT naming a driver records it, found or not, so asking never becomes a write of its own.
//
// Thread safety: every method may be called from any thread; one mutex guards the map, held only
// for a map update. A host has a handful of drivers, so the map stays tiny.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace jitcache::daemon::store {

struct DriverAsk {
  std::uint32_t driver_api = 0;
  std::string driver_build;
  std::int64_t last_asked_at_ms = 0;
};

class DriverLog {
 public:
  void record(std::uint32_t driver_api, const std::string& driver_build, std::int64_t now_ms);
  // Everything recorded so far; the log is empty afterwards.
  std::vector<DriverAsk> take();
  // Puts asks back after a flush failed, keeping the later time of each driver.
  void restore(const std::vector<DriverAsk>& asks);

 private:
  void merge_locked(std::uint32_t driver_api, const std::string& driver_build, std::int64_t at_ms);

  std::mutex m_mutex;
  std::map<std::pair<std::uint32_t, std::string>, std::int64_t> m_asked;
};

}  // namespace jitcache::daemon::store
