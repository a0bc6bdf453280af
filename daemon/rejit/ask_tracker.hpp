// AskTracker: which (driver, arch) pairs clients have asked for since the daemon started, so that
// the first ask of a pair, and above all of a driver build the store has no entry of, becomes a
// re-JIT event (rejit.hpp) while every later ask costs one set lookup. Seeded with the drivers of
// the stored entries (the drivers table), so a driver the store has seen is never "new".
//
// Rationale for the bound: a host has a few drivers and archs; anyone can name any driver, so at
// most k_max_tracked_pairs distinct pairs are remembered, and past that no pair is an event (a
// daemon asked for more than that many has no single "previous driver" worth re-compiling for).
//
// Per uid: an untrusted uid may add at most k_max_pairs_per_uid pairs (its programs ask for a
// driver and an arch or two; one that names more is inventing them), so one uid cannot fill the
// tracker and leave a real upgrade unnoticed. A trusted caller's asks are not limited.
//
// Thread safety: every method may be called from any thread; one mutex, held for a set update.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <utility>

namespace jitcache::daemon::rejit {

inline constexpr std::size_t k_max_tracked_pairs = 4096;
inline constexpr std::size_t k_max_pairs_per_uid = 16;

// The first ask of a (driver, arch) pair since start.
struct Sighting {
  std::string arch;
  std::uint32_t driver_api = 0;
  std::string driver_build;
  // The driver itself was never asked for since start and has no entries stored (at start).
  bool new_driver = false;
  std::optional<std::uint32_t> asker;  // the untrusted uid whose ask it was; nullopt: a trusted caller
};

class AskTracker {
 public:
  explicit AskTracker(std::size_t max_pairs = k_max_tracked_pairs, std::size_t max_pairs_per_uid = k_max_pairs_per_uid)
      : m_max_pairs(max_pairs), m_max_pairs_per_uid(max_pairs_per_uid) {}

  // A driver the store holds entries of: its asks are never a new driver.
  void know_driver(std::uint32_t driver_api, const std::string& driver_build);
  // The sighting when this pair is asked for the first time (and the tracker has room), else nothing.
  // `asker`: the untrusted uid asking, or nullopt for a trusted caller.
  std::optional<Sighting> note(const std::string& arch, std::uint32_t driver_api, const std::string& driver_build,
                               std::optional<std::uint32_t> asker = std::nullopt);

 private:
  const std::size_t m_max_pairs;
  const std::size_t m_max_pairs_per_uid;
  std::mutex m_mutex;
  std::set<std::pair<std::uint32_t, std::string>> m_drivers;
  std::set<std::tuple<std::uint32_t, std::string, std::string>> m_pairs;
  std::map<std::uint32_t, std::size_t> m_pairs_of_uid;  // at most one row per pair added
};

}  // namespace jitcache::daemon::rejit
