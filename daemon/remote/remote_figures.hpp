// The figures of each remote, in one list that drives both STATS (remote<i>.<stats_name>) and the
// metrics endpoint (jitcache_remote_* with remote="<i>", and the family's own label where it has
// one), as daemon/stats/counter_table.hpp does for the daemon's own figures. Names are persisted:
// users scrape and script them, so a name is never renamed or reused.
// Thread safety: reads atomics one by one; call from any thread.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <daemon/remote/remote_tier.hpp>

namespace jitcache::daemon::remote {

struct RemoteFigure {
  std::string stats_name;  // "hits", "errors.timeout", "rejected.bad_signature", ...
  std::string_view metric;
  std::string_view help;  // the family's HELP text (the same on every sample of the family)
  bool counter = true;    // else a gauge
  std::string_view label_name = {};
  std::string_view label_value = {};
  std::uint64_t value = 0;
};

std::vector<RemoteFigure> remote_figures(const RemoteTier& tier, std::size_t remote);

// STATS's pairs: remotes (how many), remote_uploads_queued, then remote<i>.<stats_name> for each.
std::vector<std::pair<std::string, std::uint64_t>> remote_stats_values(const RemoteTier* tier);

}  // namespace jitcache::daemon::remote
