// VERIFY (PROTOCOL.md §5, `jitcache verify`): a full check of the store on demand. First the
// file's PRAGMA integrity_check, then every stored image, page by page, decoded and checked
// against its checksum as a lookup would; a bad entry is deleted and counted (corrupt_entries).
//
// Rationale: pages of k_verify_page_entries entries, each a short read transaction on one reader
// and each deletion a short write, so a VERIFY of a large store never holds a connection, the
// writer or a store reset (recovering_database.hpp) for long: lookups and PUTs go on meanwhile.
//
// Thread safety: runs on the caller's thread against a thread-safe store; the server runs it on a
// lane of its own so it occupies neither a connection worker nor the writer thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include <daemon/store/maintenance.hpp>

namespace jitcache::daemon::store {

inline constexpr unsigned k_verify_page_entries = 32;

struct VerifyReport {
  std::string integrity;  // integrity_check's "ok", or its first findings
  std::uint64_t entries_checked = 0;
  std::uint64_t entries_removed = 0;
  std::vector<RemovedEntry> removed;  // the first `max_listed` of them
  std::chrono::milliseconds duration{0};
};

Result<VerifyReport> run_verify(Maintenance& store, std::size_t max_listed);

}  // namespace jitcache::daemon::store
