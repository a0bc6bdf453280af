// When clients last used each driver (driver_api, driver_build), kept in memory until the store
// moves the times of the drivers table's rows with the hit counts (usage flush). Two kinds of use:
//   - served: an entry keyed to the driver was served (a lookup hit, a published hit). A driver
//     served has entries, so these are bounded by what the store holds;
//   - asked: a LOOKUP or COMPILE named the driver, found or not. Anyone can name any driver, so at
//     most k_max_asked_drivers distinct ones are kept between flushes; the rest are dropped and
//     counted (a driver in use is asked for again at once, and every hit records it as served).
// Neither adds a row to the table: a driver gets one when an entry of it is written
// (schema/0006_drivers_of_entries.sql), so a made-up driver costs nothing on disk.
//
// Thread safety: every method may be called from any thread; one mutex guards both maps, held only
// for a map update.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace jitcache::daemon::store {

// Rationale: a host has a handful of drivers and a fleet's store a few dozen; 1 024 distinct drivers
// asked for within one usage flush interval is only ever a client making them up, and 16 384 served
// ones is more than any store holds entries of. Both bound what a failing flush keeps (on a full
// disk, 200 000 made-up drivers grew the daemon from 11 to 233 MB before these bounds).
inline constexpr std::size_t k_max_asked_drivers = 1024;
inline constexpr std::size_t k_max_served_drivers = 16384;

struct DriverAsk {
  std::uint32_t driver_api = 0;
  std::string driver_build;
  std::int64_t last_asked_at_ms = 0;
  bool served = false;
};

class DriverLog {
 public:
  explicit DriverLog(std::size_t max_asked = k_max_asked_drivers, std::size_t max_served = k_max_served_drivers)
      : m_max_asked(max_asked), m_max_served(max_served) {}

  void record_asked(std::uint32_t driver_api, const std::string& driver_build, std::int64_t now_ms);
  void record_served(std::uint32_t driver_api, const std::string& driver_build, std::int64_t now_ms);
  // Everything recorded so far; the log is empty afterwards.
  std::vector<DriverAsk> take();
  // Puts uses back after a flush failed, keeping the later time of each driver, within the limits.
  void restore(const std::vector<DriverAsk>& asks);

  std::size_t pending() const;
  // Uses of a driver not yet in the log dropped because it was full, since construction.
  std::uint64_t dropped() const;

 private:
  using Driver = std::pair<std::uint32_t, std::string>;
  using Times = std::map<Driver, std::int64_t>;

  void merge_locked(Times& times, std::size_t limit, std::uint32_t driver_api, const std::string& driver_build,
                    std::int64_t at_ms);

  const std::size_t m_max_asked;
  const std::size_t m_max_served;
  mutable std::mutex m_mutex;
  Times m_asked;
  Times m_served;
  std::uint64_t m_dropped = 0;
};

}  // namespace jitcache::daemon::store
