// Quarantine (schema/0002_quarantine.sql, 0005_tenants.sql): the writer-side step of REPORT_FAILURE.
// An entry a client could not load stays in the store and in LIST, but lookups skip it
// (sqlite_store.cpp) until a PUT replaces it, which clears the mark.
//
// Rationale (docs/security.md "Failure reports"): a shared entry is served to every tenant, so one
// untrusted uid's word must not take it from the others; otherwise any tenant could make every
// other tenant rebuild any kernel, over and over. Its report hides the entry from its own lookups
// at once (so its next load rebuilds, and the rebuilt image in its own namespace is served to it),
// and the entry is quarantined for everyone once `quorum` distinct uids reported the same image or
// a trusted one did. A false report so costs its sender, not its neighbours.
//
// Thread safety: runs on the writer connection, which the caller holds exclusively (SqliteStore's
// writer mutex).
#pragma once

#include <cstdint>
#include <optional>

#include <proto/digest.hpp>

#include <daemon/store/sqlite_db.hpp>
#include <daemon/store/store.hpp>
#include <daemon/store/tenancy.hpp>

namespace jitcache::daemon::store {

struct QuarantinedEntry {
  std::int64_t entry_id = 0;  // the entries row the report applied to (the caller drops its cached image)
  ReportOutcome outcome;
};

// In one transaction: picks the entry of `key_id` that `who` would be served (the first live one
// of the shared namespace and `who`'s own, in that order, skipping shared ones `who` reported),
// else one `who` already reported, else the first quarantined one; then applies the report as
// Tenancy::report_failure says. Every report that changes something adds 1 to the entry's
// load_failures. nullopt: `who` sees no entry of the key.
Result<std::optional<QuarantinedEntry>> quarantine_entry(SqliteDb& writer, const proto::Digest256& key_id,
                                                         const Visibility& who, const FailureReport& report,
                                                         std::int64_t now_ms, unsigned quorum);

}  // namespace jitcache::daemon::store
