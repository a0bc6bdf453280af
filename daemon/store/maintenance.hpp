// Maintenance: what keeps a local store within its limits and honest, apart from serving: writing
// the usage counted in memory, eviction and GC, and VERIFY's checks. The server's usage flush, the
// GC and VERIFY ops (request_handler.cpp, verify.hpp) use it; a remote tier has none of it.
//
// Thread safety: every method may be called from any thread. Each is a write on the store's single
// writer or a read on one of its read connections, and may block on disk I/O: keep it off the
// server's accept loop.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <common/result.hpp>
#include <proto/digest.hpp>

#include <daemon/store/store.hpp>

namespace jitcache::daemon::store {

// What a GC removed, and the store afterwards.
struct GcOutcome {
  std::uint64_t evicted_entries = 0;
  std::uint64_t evicted_bytes = 0;  // stored bytes
  std::uint64_t stale_entries = 0;  // of the evicted, those of a driver no client asks for any more
  std::uint64_t entries = 0;        // left
  std::uint64_t bytes_stored = 0;   // left
};

// One page of a full check of the stored images (VERIFY, verify.hpp): entries with id > after_id in
// id order, each image decoded and checked against its checksum; a bad one is deleted, counted in
// Totals::corrupt_entries and logged, as a lookup would.
struct RemovedEntry {
  proto::Digest256 key_id;
  std::uint32_t namespace_id = k_shared_namespace;
};
struct VerifyBatch {
  std::uint64_t checked = 0;
  std::vector<RemovedEntry> removed;
  std::int64_t last_id = 0;  // pass as after_id for the next page
  bool done = false;         // no entries after last_id
};

class Maintenance {
 public:
  virtual ~Maintenance() = default;

  // Hits and last-used times are kept in memory by lookups and written here in one transaction,
  // so that hits do not become writes; so are the drivers lookups asked for (AskedDriver). The
  // daemon calls it periodically and at shutdown. What is kept between flushes is bounded
  // (Totals::usage_pending); a failed flush keeps its records within that bound.
  virtual Result<void> flush_usage() = 0;
  // A client asked for an entry keyed to this driver outside a lookup (HIT_NOTE; a lookup's
  // Selector carries its own): kept in memory as AskedDriver says; never a write of its own.
  virtual void note_driver_asked(const AskedDriver& driver) = 0;
  // Runs eviction now: every entry of a stale driver, then least recently used entries while the
  // store is over its limit (down to the low-water mark, as a PUT would). A write.
  virtual Result<GcOutcome> collect_garbage() = 0;
  // PRAGMA integrity_check on one read connection: "ok", or its first findings, one per line. It
  // reads the whole file; lookups keep going on the other connections meanwhile.
  virtual Result<std::string> integrity_check() = 0;
  // See VerifyBatch. Reads on a read connection; each deletion is a short write of its own.
  virtual Result<VerifyBatch> verify_entries(std::int64_t after_id, unsigned limit) = 0;
};

}  // namespace jitcache::daemon::store
