// The STATS names of everything about compiling (PROTOCOL.md §5 STATS): the daemon's own compile
// counters and the compile service's. Names are protocol: never rename one. A daemon that cannot
// compile reports them all as 0, so a client's view does not depend on the configuration.
// Thread safety: reads atomics; a snapshot is a set of independent reads.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <daemon/compile/compile_counters.hpp>
#include <daemon/stats/counters.hpp>

namespace jitcache::daemon::stats {

// `engine`: the compile service's counters, or null when the daemon cannot compile.
void append_compile_stats(std::vector<std::pair<std::string, std::uint64_t>>& out, const Counters& counters,
                          const compile::CompileCounters* engine);

}  // namespace jitcache::daemon::stats
