// Sources: the PTX the daemon compiled its own entries from, kept beside them (schema 0009,
// docs/entry-format.md "sources"), so that it can compile an entry again without a client: the
// re-JIT after a driver upgrade or for a new arch (daemon/rejit/). What is kept:
//   - only for entries the daemon compiled itself into the shared namespace (PutInput::source with
//     a PTX; a link's inputs are not kept), with the nvJitLink options the worker was given;
//   - zstd-compressed, one row per content digest however many entries share it;
//   - within source_budget bytes (compressed): over it, the sources of the coldest entries go first
//     (the least recently used of their entries), sources of no entry before any;
//   - a source goes with the last entry compiled from it (a trigger, whatever deletes the entry).
// The PUT keeps the source in its own transaction (SqliteStore::put); this interface is what reads
// them back.
//
// Thread safety: every method may be called from any thread; reads run on one of the store's read
// connections and may block on disk I/O.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <common/result.hpp>
#include <proto/digest.hpp>
#include <proto/key.hpp>

namespace jitcache::daemon::store {

using common::Result;

// An entry worth compiling again: its key, its fast-key content (the new entry gets the same), and
// what ranks it.
struct HotEntry {
  proto::KeyFields key;
  proto::Checksum128 content_fast;
  std::uint64_t hits = 0;
  std::uint64_t compile_time_us = 0;
};

// Which entries hot_set() returns: live shared entries of one driver with a kept source.
struct HotSetQuery {
  std::uint32_t driver_api = 0;
  std::string driver_build;
  std::string arch;  // empty: every arch
  unsigned limit = 0;
};

// A driver with stored entries (the drivers table) and when a client last asked for it.
struct KnownDriver {
  std::uint32_t driver_api = 0;
  std::string driver_build;
  std::int64_t last_asked_at_ms = 0;
};

class Sources {
 public:
  virtual ~Sources() = default;

  // The hottest first, ranked by uses × compile time: (hits + 1) × compile_time_us, where the one
  // is the request that compiled it (an entry compiled once and never hit again was still asked
  // for once), then the most recently used; at most query.limit. Entries of a link or quarantined
  // are left out. Usage kept in memory is flushed first, so the hits are current.
  virtual Result<std::vector<HotEntry>> hot_set(const HotSetQuery& query) = 0;
  // The kept PTX of this content digest, decoded and checked against the digest (a source that
  // fails is deleted and reported as none); nullopt when none is kept.
  virtual Result<std::optional<std::vector<std::uint8_t>>> kept_source(const proto::Digest256& content_digest) = 0;
  // Whether the shared namespace holds an entry of this key id, live or quarantined.
  virtual Result<bool> has_shared_entry(const proto::Digest256& key_id) = 0;
  // The drivers of the stored entries, the most recently asked for first.
  virtual Result<std::vector<KnownDriver>> known_drivers() = 0;
  // Whether any entry of this driver and arch is stored, in any namespace.
  virtual Result<bool> has_entries_of(std::uint32_t driver_api, const std::string& driver_build,
                                      const std::string& arch) = 0;
};

}  // namespace jitcache::daemon::store
