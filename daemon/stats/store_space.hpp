// The space left on the filesystem that holds the store, for STATS and the metrics endpoint
// (`store_free_bytes`, `store_filesystem_bytes`): with max_size, what tells an operator (and
// `jitcache doctor`) whether the disk fills before eviction starts (docs/operations.md "Full disks").
// Measured when a reply or a scrape is made, not kept: a statvfs costs about a microsecond.
// Thread safety: a pure function over the file system.
#pragma once

#include <cstdint>
#include <string>

namespace jitcache::daemon::stats {

struct StoreSpace {
  std::uint64_t free_bytes = 0;        // what the daemon's uid may still write (statvfs f_bavail)
  std::uint64_t filesystem_bytes = 0;  // the filesystem's size
};

// Zeros when `directory` is empty or cannot be measured.
StoreSpace store_space(const std::string& directory);

}  // namespace jitcache::daemon::stats
