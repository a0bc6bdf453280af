// SqliteStore's tenancy (Tenancy): bytes by namespace for the metrics endpoint, one read of
// namespace_totals (schema 5), which triggers keep exact, so a scrape never walks the entries; and
// failure reports, which quarantine.hpp applies on the writer.
#include <daemon/store/sqlite_store.hpp>

#include <algorithm>

#include <common/result.hpp>
#include <daemon/store/quarantine.hpp>

namespace jitcache::daemon::store {

namespace {

// One row per namespace that holds entries: as many as uids that stored something, plus shared.
constexpr char k_namespace_totals_sql[] =
    "SELECT namespace, entries, bytes_stored FROM namespace_totals ORDER BY bytes_stored DESC, namespace ASC";

}  // namespace

Result<NamespaceTotals> SqliteStore::namespace_totals(unsigned top) {
  JITCACHE_TRY(m_handle.begin_call(StoreCall::namespace_totals));
  return m_handle.run([top](StoreDatabase& db) -> Result<NamespaceTotals> {
    NamespaceTotals out;
    out.largest.push_back(NamespaceUsage{k_shared_namespace, 0, 0});
    auto reader = db.readers.acquire();
    auto stmt = reader->statement(k_namespace_totals_sql);
    JITCACHE_TRY(stmt);
    unsigned others_listed = 0;
    for (;;) {
      auto row = (*stmt)->step("reading the bytes by namespace");
      JITCACHE_TRY(row);
      if (!*row) break;
      NamespaceUsage usage;
      usage.namespace_id = static_cast<std::uint32_t>((*stmt)->column_int64(0));
      usage.entries = static_cast<std::uint64_t>((*stmt)->column_int64(1));
      usage.bytes_stored = static_cast<std::uint64_t>((*stmt)->column_int64(2));
      if (usage.namespace_id == k_shared_namespace) {
        out.largest.front() = usage;
      } else if (others_listed < top) {
        out.largest.push_back(usage);
        ++others_listed;
      } else {
        out.other.entries += usage.entries;
        out.other.bytes_stored += usage.bytes_stored;
        ++out.other_namespaces;
      }
    }
    return out;
  });
}

Result<std::optional<ReportOutcome>> SqliteStore::report_failure(const proto::Digest256& key_id, const Visibility& who,
                                                                 const FailureReport& report) {
  JITCACHE_TRY(m_handle.begin_call(StoreCall::report_failure));
  const std::int64_t now = m_clock();
  return m_handle.run_write([&](StoreDatabase& db) -> Result<std::optional<ReportOutcome>> {
    std::lock_guard lock(m_handle.writer_mutex());
    auto quarantined = quarantine_entry(db.writer, key_id, who, report, now, m_report_quorum);
    JITCACHE_TRY(quarantined);
    if (!quarantined->has_value()) return std::optional<ReportOutcome>();
    // Lookups skip a quarantined row, so its cached image would only hold memory until evicted; a
    // row hidden from one uid is still served to the others.
    if ((*quarantined)->outcome.verdict == ReportVerdict::quarantined) {
      drop_row((*quarantined)->entry_id);
    } else {
      m_hot.forget_hits_of((*quarantined)->entry_id);  // no longer the reporter's answer
    }
    return std::optional<ReportOutcome>((*quarantined)->outcome);
  });
}

}  // namespace jitcache::daemon::store
