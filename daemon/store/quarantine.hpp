// Quarantine (schema/0002_quarantine.sql): the writer-side step of REPORT_FAILURE. An entry a client
// could not load stays in the store and in LIST, but lookups skip it (sqlite_store.cpp) until a PUT
// replaces it, which clears the mark.
//
// Thread safety: runs on the writer connection, which the caller holds exclusively (SqliteStore's
// writer mutex).
#pragma once

#include <cstdint>
#include <optional>

#include <jitcache/proto/digest.hpp>

#include <daemon/store/sqlite_db.hpp>
#include <daemon/store/store.hpp>

namespace jitcache::daemon::store {

struct QuarantinedEntry {
  std::int64_t entry_id = 0;  // the entries row the report applied to (the caller drops its cached image)
  ReportOutcome outcome;
};

// In one transaction: picks the entry of `key_id` that `who` would be served (the first live one
// of the shared namespace and `who`'s own, in that order), else the first quarantined one; marks
// it quarantined at `now_ms` with the report unless it already is (the first reason is kept);
// and adds 1 to its load_failures either way. nullopt: `who` sees no entry of the key.
Result<std::optional<QuarantinedEntry>> quarantine_entry(SqliteDb& writer, const proto::Digest256& key_id,
                                                         const Visibility& who, const FailureReport& report,
                                                         std::int64_t now_ms);

}  // namespace jitcache::daemon::store
