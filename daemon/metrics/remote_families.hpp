// The fleet tier's figures on the metrics endpoint: every figure of daemon/remote/remote_figures.hpp
// as jitcache_remote_* {remote="<i>", url="<its name>"}, the call latency histogram
// jitcache_remote_duration_seconds, and jitcache_remote_uploads_queued.
// Thread safety: reads atomics; call from the rendering thread.
#pragma once

#include <daemon/metrics/exposition.hpp>
#include <daemon/remote/remote_tier.hpp>

namespace jitcache::daemon::metrics {

// Appends nothing when `tier` is null (no remotes).
void append_remote_families(Exposition& out, const remote::RemoteTier* tier);

}  // namespace jitcache::daemon::metrics
