// The store's schema as an ordered list of numbered SQL migrations, embedded at build time from
// schema/NNNN_name.sql (schema/embed_migrations.cmake), plus the version numbers the store records
// in its meta table. docs/entry-format.md explains the tables and how to add a migration.
//
// Thread safety: immutable data with static storage duration; safe from any thread.
#pragma once

#include <span>
#include <string_view>

namespace jitcache::schema {

struct Migration {
  int version;            // NNNN of the file name: 1, 2, 3, ... without gaps
  std::string_view name;  // the file name without the .sql suffix, e.g. "0001_initial"
  std::string_view sql;   // statements run in the migrator's transaction (no BEGIN/COMMIT/PRAGMA)
};

// The newest migration: a database migrated by this code reports this version. The generated
// source static_asserts that it equals the number of the last schema/*.sql file, so adding a
// migration without bumping it (or the reverse) fails the build.
inline constexpr int k_schema_version = 11;

// The oldest schema version whose code can still read and write a database at k_schema_version.
// Bump it to k_schema_version when a migration changes something older code relies on (a renamed
// column, a new NOT NULL column without a default); leave it when older code keeps working (a new
// index, a new table it never touches). The migrator refuses a database whose compatible version is
// newer than the running code's k_schema_version.
//
// Rationale: 2, because code of schema 1 ignores the quarantine columns of 0002: it would serve
// quarantined entries, and its PUT would leave a rebuilt entry marked quarantined for newer code.
// 0003 (fast keys) keeps it: schema-2 code ignores content_fast and fast_key_id, and an entry it
// replaces keeps the same content (one key id, one content digest), so its fast key stays true.
// 0004 (drivers) keeps it: older code never evicts and never touches the table; the drivers of the
// entries it writes get a row at the next start of newer code (eviction.hpp sync_drivers).
// 0005 (tenants) keeps it: the triggers keep namespace_totals exact and clear a replaced entry's
// failure reports whatever code writes; older code only ignores the reports (it serves a reported
// shared entry to its reporter, as it always did) and the quota (it never enforced one).
// 0006 (drivers of entries) keeps it: the triggers keep a row for every entry's driver whatever code
// writes; the rows older code still adds for every driver asked for are deleted at the next start of
// newer code (eviction.hpp sync_drivers).
// 0007 (every entry has a fast key) keeps it: older code reads and serves the file as before, and
// its PUTs with content_fast (every client since schema 3) are stored; a PUT without one, which
// older code still accepts, is refused by the file's trigger and answered `internal`: the client
// carries on uncached, and no entry that a fast-key lookup cannot find is written.
// 0008 (eviction priority) keeps it: older code never reads priority or eviction_inflation; the
// entries it writes have no priority, which newer code's next eviction computes before it chooses;
// the hits it flushes and the images it replaces leave an entry's priority as it was, so such an
// entry is ordered by what newer code last saw of it until newer code serves it again.
// 0009 (sources) keeps it: older code never reads the sources tables; the file's own triggers drop a
// source with the last entry compiled from it and keep the totals row's source figures exact,
// whatever code deletes entries, and an entry older code compiles simply has no source kept.
// 0010 (EXPLAIN by content and namespace) keeps it: an index older code never names; SQLite keeps
// it up to date whatever code writes.
// 0011 (removed keys) keeps it: older code never reads the table; a removal it makes is not
// remembered, and its imports bring removed entries back, as they always did.
inline constexpr int k_compatible_version = 2;

// Every migration, in version order starting at 1.
std::span<const Migration> migrations();

}  // namespace jitcache::schema
