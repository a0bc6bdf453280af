// Replays a trace (eviction_trace.hpp) through the real SqliteStore on a temporary SQLite file, as
// the daemon serves loads: a LOOKUP per request; a hit spares the entry's compile; a miss PUTs the
// entry (its image: incompressible bytes of its stored size, stored raw) with its compile time,
// evicting first when the store would go over max_size. Usage is flushed every `flush_every`
// requests, as usage_flush_interval does; a fake clock moves one second per request.
//
// Thread safety: one replay per call; each opens its own store.
#pragma once

#include <cstdint>
#include <filesystem>

#include <common/result.hpp>
#include <daemon/store/eviction_order.hpp>

#include <tests/bench/eviction_trace.hpp>

namespace jitcache::bench {

struct ReplayFigures {
  std::uint64_t requests = 0;
  std::uint64_t hits = 0;
  double compile_seconds_saved = 0;   // the hits' compile times, summed
  double compile_seconds_missed = 0;  // the misses' compile times, summed
  std::uint64_t bytes_hit = 0;        // stored bytes served by hits
  std::uint64_t bytes_written = 0;    // stored bytes PUT after misses
  std::uint64_t evictions = 0;
  double wall_seconds = 0;
};

struct ReplaySettings {
  daemon::store::EvictionOrder order = daemon::store::EvictionOrder::gdsf;
  std::uint64_t max_size_bytes = 0;
  std::uint64_t flush_every = 100;
  std::filesystem::path directory;  // where the database file is made (and removed afterwards)
};

// An error when the store fails (a PUT, a LOOKUP, opening the file).
common::Result<ReplayFigures> replay(const Trace& trace, const ReplaySettings& settings);

}  // namespace jitcache::bench
