#include <daemon/store/quarantine.hpp>

#include <algorithm>
#include <string>

namespace jitcache::daemon::store {

namespace {

// Live before quarantined, then shared before own: the entry a lookup would serve comes first.
// Rationale: a report names a key, not the exact image the client was served. Between its lookup and
// its report a PUT may have replaced that image, or another report may have quarantined the shared
// entry so that this one lands on the caller's own live entry. Either way the cost is one rebuild of
// an entry that may have been good, never a bad image served, so the simpler request wins.
constexpr char k_pick_sql[] =
    "SELECT id, namespace, quarantined_at_ms IS NOT NULL FROM entries WHERE key_id = ?1 AND namespace IN (0, ?2)"
    " ORDER BY quarantined_at_ms IS NOT NULL, namespace LIMIT 1";

constexpr char k_quarantine_sql[] =
    "UPDATE entries SET quarantined_at_ms = ?2, quarantine_result = ?3, quarantine_stage = ?4,"
    " quarantine_reporter_uid = ?5, quarantine_detail = ?6, load_failures = load_failures + 1"
    " WHERE id = ?1";

constexpr char k_count_failure_sql[] = "UPDATE entries SET load_failures = load_failures + 1 WHERE id = ?1";

}  // namespace

Result<std::optional<QuarantinedEntry>> quarantine_entry(SqliteDb& writer, const proto::Digest256& key_id,
                                                         const Visibility& who, const FailureReport& report,
                                                         std::int64_t now_ms) {
  const std::string what = "quarantining entry " + proto::to_hex(key_id);
  auto transaction = Transaction::begin(writer, TransactionKind::immediate, what);
  if (!transaction) return transaction.error();

  std::int64_t id = 0;
  ReportOutcome outcome;
  {
    auto stmt = writer.statement(k_pick_sql);
    if (!stmt) return stmt.error();
    (*stmt)->bind_blob(1, key_id.bytes);
    (*stmt)->bind(2, who.own_namespace);
    auto row = (*stmt)->step(what);
    if (!row) return row.error();
    if (!*row) return std::optional<QuarantinedEntry>();
    id = (*stmt)->column_int64(0);
    outcome.namespace_id = static_cast<std::uint32_t>((*stmt)->column_int64(1));
    outcome.newly_quarantined = (*stmt)->column_int64(2) == 0;
  }
  {
    auto stmt = writer.statement(outcome.newly_quarantined ? k_quarantine_sql : k_count_failure_sql);
    if (!stmt) return stmt.error();
    Statement& s = **stmt;
    s.bind(1, id);
    if (outcome.newly_quarantined) {
      // quarantined_at_ms 0 means "live" on the wire, so a clock at the epoch still marks it.
      s.bind(2, std::max<std::int64_t>(now_ms, 1));
      s.bind(3, report.cu_result);
      s.bind(4, static_cast<std::int64_t>(report.stage));
      s.bind(5, report.reporter_uid);
      s.bind_text(6, report.detail);
    }
    if (auto r = s.run(what); !r) return r.error();
  }
  if (auto r = transaction->commit(what); !r) return r.error();
  return std::optional<QuarantinedEntry>(QuarantinedEntry{id, outcome});
}

}  // namespace jitcache::daemon::store
