#include <daemon/store/quarantine.hpp>

#include <algorithm>
#include <common/result.hpp>
#include <string>

namespace jitcache::daemon::store {

namespace {

// Live before quarantined, then not yet reported by this uid before reported, then shared before
// own: the entry a lookup would serve comes first.
// Rationale: a report names a key, not the exact image the client was served. Between its lookup and
// its report a PUT may have replaced that image, or another report may have quarantined the shared
// entry so that this one lands on the caller's own live entry. Either way the cost is one rebuild of
// an entry that may have been good, never a bad image served, so the simpler request wins.
// ?3 is the reporter's uid; a trusted reporter (?4 = 1) is never recorded, so nothing is hidden from it.
constexpr char k_pick_sql[] =
    "SELECT id, namespace, quarantined_at_ms IS NOT NULL,"
    " ?4 = 0 AND namespace = 0 AND EXISTS (SELECT 1 FROM failure_reports"
    " WHERE entry_id = entries.id AND reporter_uid = ?3) AS reported"
    " FROM entries WHERE key_id = ?1 AND namespace IN (0, ?2)"
    " ORDER BY quarantined_at_ms IS NOT NULL, quarantined_at_ms IS NULL AND reported, namespace LIMIT 1";

constexpr char k_quarantine_sql[] =
    "UPDATE entries SET quarantined_at_ms = ?2, quarantine_result = ?3, quarantine_stage = ?4,"
    " quarantine_reporter_uid = ?5, quarantine_detail = ?6, load_failures = load_failures + 1"
    " WHERE id = ?1";

constexpr char k_count_failure_sql[] = "UPDATE entries SET load_failures = load_failures + 1 WHERE id = ?1";

constexpr char k_record_report_sql[] =
    "INSERT INTO failure_reports (entry_id, reporter_uid, reported_at_ms, cu_result, stage, detail)"
    " VALUES (?1, ?2, ?3, ?4, ?5, ?6)";

constexpr char k_count_reporters_sql[] = "SELECT COUNT(*) FROM failure_reports WHERE entry_id = ?1";

struct Picked {
  std::int64_t id = 0;
  std::uint32_t namespace_id = k_shared_namespace;
  bool quarantined = false;
  bool reported_by_caller = false;
};

Result<std::optional<Picked>> pick(SqliteDb& writer, const proto::Digest256& key_id, const Visibility& who,
                                   std::uint32_t reporter_uid, const std::string& what) {
  auto stmt = writer.statement(k_pick_sql);
  JITCACHE_TRY(stmt);
  (*stmt)->bind_blob(1, key_id.bytes);
  (*stmt)->bind(2, who.own_namespace);
  (*stmt)->bind(3, reporter_uid);
  (*stmt)->bind(4, who.trusted ? 1 : 0);
  auto row = (*stmt)->step(what);
  JITCACHE_TRY(row);
  if (!*row) return std::optional<Picked>();
  return std::optional<Picked>(Picked{(*stmt)->column_int64(0), static_cast<std::uint32_t>((*stmt)->column_int64(1)),
                                      (*stmt)->column_int64(2) != 0, (*stmt)->column_int64(3) != 0});
}

Result<void> run_on_entry(SqliteDb& writer, const char* sql, std::int64_t id, const std::string& what) {
  auto stmt = writer.statement(sql);
  JITCACHE_TRY(stmt);
  (*stmt)->bind(1, id);
  return (*stmt)->run(what);
}

Result<void> mark_quarantined(SqliteDb& writer, std::int64_t id, const FailureReport& report, std::int64_t now_ms,
                              const std::string& what) {
  auto stmt = writer.statement(k_quarantine_sql);
  JITCACHE_TRY(stmt);
  Statement& s = **stmt;
  s.bind(1, id);
  // quarantined_at_ms 0 means "live" on the wire, so a clock at the epoch still marks it.
  s.bind(2, std::max<std::int64_t>(now_ms, 1));
  s.bind(3, report.cu_result);
  s.bind(4, static_cast<std::int64_t>(report.stage));
  s.bind(5, report.reporter_uid);
  s.bind_text(6, report.detail);
  return s.run(what);
}

// Records an untrusted uid's report of a shared entry; returns how many distinct uids reported it.
Result<std::uint32_t> record_report(SqliteDb& writer, std::int64_t id, const FailureReport& report, std::int64_t now_ms,
                                    const std::string& what) {
  {
    auto stmt = writer.statement(k_record_report_sql);
    JITCACHE_TRY(stmt);
    Statement& s = **stmt;
    s.bind(1, id);
    s.bind(2, report.reporter_uid);
    s.bind(3, now_ms);
    s.bind(4, report.cu_result);
    s.bind(5, static_cast<std::int64_t>(report.stage));
    s.bind_text(6, report.detail);
    JITCACHE_TRY(s.run(what));
  }
  auto stmt = writer.statement(k_count_reporters_sql);
  JITCACHE_TRY(stmt);
  (*stmt)->bind(1, id);
  auto row = (*stmt)->step(what);
  JITCACHE_TRY(row);
  return static_cast<std::uint32_t>(*row ? (*stmt)->column_int64(0) : 0);
}

}  // namespace

Result<std::optional<QuarantinedEntry>> quarantine_entry(SqliteDb& writer, const proto::Digest256& key_id,
                                                         const Visibility& who, const FailureReport& report,
                                                         std::int64_t now_ms, unsigned quorum) {
  const std::string what = "reporting entry " + proto::to_hex(key_id) + " failing";
  auto transaction = Transaction::begin(writer, TransactionKind::immediate, what);
  JITCACHE_TRY(transaction);

  auto picked = pick(writer, key_id, who, report.reporter_uid, what);
  JITCACHE_TRY(picked);
  if (!picked->has_value()) return std::optional<QuarantinedEntry>();
  const Picked& entry = **picked;
  QuarantinedEntry result{entry.id, ReportOutcome{entry.namespace_id, ReportVerdict::quarantined, 0}};

  if (entry.quarantined) {
    result.outcome.verdict = ReportVerdict::already_quarantined;
    JITCACHE_TRY(run_on_entry(writer, k_count_failure_sql, entry.id, what));
  } else if (entry.reported_by_caller) {
    // The same uid again (its rebuild failed too, or a flood): nothing new to record.
    result.outcome.verdict = ReportVerdict::hidden_from_reporter;
    return std::optional<QuarantinedEntry>(result);
  } else if (entry.namespace_id == k_shared_namespace && !who.trusted) {
    auto reporters = record_report(writer, entry.id, report, now_ms, what);
    JITCACHE_TRY(reporters);
    result.outcome.reporters = *reporters;
    if (*reporters >= std::max(quorum, 1u)) {
      JITCACHE_TRY(mark_quarantined(writer, entry.id, report, now_ms, what));
    } else {
      result.outcome.verdict = ReportVerdict::hidden_from_reporter;
      JITCACHE_TRY(run_on_entry(writer, k_count_failure_sql, entry.id, what));
    }
  } else {
    JITCACHE_TRY(mark_quarantined(writer, entry.id, report, now_ms, what));
  }
  JITCACHE_TRY(transaction->commit(what));
  return std::optional<QuarantinedEntry>(result);
}

}  // namespace jitcache::daemon::store
