// How a SqliteStore is opened (sqlite_store.hpp): the file, its connections, its limits, and
// whether it recovers from a corrupt or lost database by itself (recovering_database.hpp).
// Thread safety: a value type.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>

#include <daemon/config/compression_level.hpp>
#include <daemon/store/eviction_order.hpp>

namespace jitcache::daemon::store {

class StoreFaults;

struct SqliteStoreOptions {
  std::filesystem::path path;  // the database file; its directory must exist
  unsigned reader_count = 4;   // read connections (at least 1)
  // How long a statement waits for a lock another process holds (e.g. an operator's sqlite3
  // shell) before the call fails with ErrorCode::unavailable.
  std::chrono::milliseconds busy_timeout{5000};
  std::int64_t cache_size_kib = 16 * 1024;     // page cache per connection
  std::int64_t reader_mmap_bytes = 2ll << 30;  // memory-mapped reads per reader connection (pragmas.hpp)
  // Budget of the in-memory cache of recently served images (config key hot_cache_size); 0: none.
  std::uint64_t hot_cache_bytes = 256ull << 20;
  // Capacity (config keys max_size and stale_driver_after; eviction.hpp). A PUT that would take
  // the stored bytes over max_size_bytes evicts first; 0: no limit. Entries of a driver no client
  // has asked for within stale_driver_after go first; zero: drivers never go stale.
  std::uint64_t max_size_bytes = 0;
  std::chrono::milliseconds stale_driver_after{0};
  // Which entries go first over max_size (config key eviction_policy; eviction.hpp).
  EvictionOrder eviction_order = EvictionOrder::gdsf;
  // Bytes of zstd-compressed sources kept for the daemon's own compiles (config key source_budget;
  // sources.hpp); 0: none kept.
  std::uint64_t source_budget_bytes = 0;
  // zstd level for new images (config key compression_level, the same default; image_codec.hpp); 0: store raw.
  // Entries already stored keep their codec: a store may hold raw and zstd images side by side.
  int compression_level = config::k_default_compression_level;
  // Tenants (docs/security.md): the stored bytes an untrusted uid's own namespace may hold
  // (namespace_quota.hpp; 0: no quota), and how many distinct untrusted uids must report a shared
  // image failing before it is quarantined for everyone (quarantine.hpp).
  std::uint64_t namespace_quota_bytes = 0;
  unsigned report_quorum = 3;
  // PRAGMA quick_check before anything else is done with the file; a failure is a corrupt error
  // (which `recover` answers by setting the file aside).
  bool quick_check_at_open = false;
  // The daemon's store (recovering_database.hpp): a database that is corrupt at open (quick_check
  // is then always run) or turns out corrupt while serving is set aside and replaced by an empty
  // one; database files deleted or replaced under the store are noticed before the next write and
  // the store reopened on what the path holds. Off, a corrupt database is an error and nothing more.
  bool recover = false;
  // Unix time in milliseconds for created_at_ms and last_used_at_ms; empty: the system clock.
  // Tests inject a fake one.
  std::function<std::int64_t()> clock;
  // Tests only: where the store's calls and statements ask whether to fail (store_faults.hpp). Not
  // owned; must outlive the store. Null (the daemon): nothing is asked.
  StoreFaults* faults = nullptr;
};

}  // namespace jitcache::daemon::store
