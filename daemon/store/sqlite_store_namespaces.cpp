// SqliteStore's bytes by namespace (Store::namespace_totals), for the metrics endpoint: one read of
// namespace_totals (schema 5), which triggers keep exact, so a scrape never walks the entries.
#include <daemon/store/sqlite_store.hpp>

#include <algorithm>

namespace jitcache::daemon::store {

namespace {

// One row per namespace that holds entries: as many as uids that stored something, plus shared.
constexpr char k_namespace_totals_sql[] =
    "SELECT namespace, entries, bytes_stored FROM namespace_totals ORDER BY bytes_stored DESC, namespace ASC";

}  // namespace

Result<NamespaceTotals> SqliteStore::namespace_totals(unsigned top) {
  NamespaceTotals out;
  out.largest.push_back(NamespaceUsage{k_shared_namespace, 0, 0});
  auto db = m_readers.acquire();
  auto stmt = db->statement(k_namespace_totals_sql);
  if (!stmt) return stmt.error();
  unsigned others_listed = 0;
  for (;;) {
    auto row = (*stmt)->step("reading the bytes by namespace");
    if (!row) return row.error();
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
}

}  // namespace jitcache::daemon::store
