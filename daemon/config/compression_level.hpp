// The zstd level of newly stored images (config key compression_level; image_codec.hpp): its range
// and its one default, read by the daemon's configuration (daemon/config/config.hpp) and by
// SqliteStoreOptions, so that a store opened without a configuration (a test, a benchmark, a tool)
// stores images as the daemon does. Header-only constants, in the configuration's folder because
// the store depends on the configuration and never the other way (docs/architecture.md "Targets"). Thread safety:
// constants.
#pragma once

namespace jitcache::daemon::config {

// zstd's levels 1..19 (the "ultra" levels above need far more memory to decompress); 0 stores raw.
inline constexpr int k_max_compression_level = 19;

// Rationale (docs/benchmarks.md "Compression"): level 3 stores cubins at a fraction of their size
// for a few milliseconds of one core per PUT, and higher levels gain little more while costing
// several times the CPU.
inline constexpr int k_default_compression_level = 3;

}  // namespace jitcache::daemon::config
