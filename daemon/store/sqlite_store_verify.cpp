// SqliteStore's part of VERIFY (verify.hpp drives it): the file's integrity_check, and pages of
// stored images checked as a lookup checks them.
#include <daemon/store/sqlite_store.hpp>

#include <string>
#include <utility>

#include <common/result.hpp>
#include <daemon/store/entry_row.hpp>
#include <daemon/store/pragmas.hpp>
#include <daemon/store/verified_image.hpp>

namespace jitcache::daemon::store {

namespace {

// Quarantined entries included: they are still stored, and a REPORT_FAILURE's PUT may revive them.
const std::string k_verify_page_sql =
    std::string("SELECT ") + k_entry_columns + " FROM entries WHERE id > ?1 ORDER BY id LIMIT ?2";

struct Damaged {
  EntryRow row;
  std::string reason;
};

}  // namespace

Result<std::string> SqliteStore::integrity_check() {
  JITCACHE_TRY(m_handle.begin_call(StoreCall::integrity_check));
  return m_handle.run([](StoreDatabase& db) {
    auto reader = db.readers.acquire();
    return run_integrity_pragma(*reader, IntegrityPragma::integrity_check);
  });
}

Result<VerifyBatch> SqliteStore::verify_entries(std::int64_t after_id, unsigned limit) {
  JITCACHE_TRY(m_handle.begin_call(StoreCall::verify_entries));
  return m_handle.run([&](StoreDatabase& database) -> Result<VerifyBatch> {
    VerifyBatch batch;
    batch.last_id = after_id;
    std::vector<Damaged> damaged;
    const std::string what = "verifying entries after id " + std::to_string(after_id);
    {
      auto db = database.readers.acquire();
      // One snapshot for the page, so each row and its blob agree; the images are decoded and hashed
      // inside it. Rationale: the page is small (the caller's limit), so the snapshot is short and a
      // connection is held for one page, not for the whole store.
      auto transaction = Transaction::begin(*db, TransactionKind::deferred, what);
      JITCACHE_TRY(transaction);
      auto stmt = db->statement(k_verify_page_sql);
      JITCACHE_TRY(stmt);
      (*stmt)->bind(1, after_id);
      (*stmt)->bind(2, static_cast<std::int64_t>(limit));
      unsigned rows = 0;
      for (;;) {
        auto has_row = (*stmt)->step(what);
        JITCACHE_TRY(has_row);
        if (!*has_row) break;
        ++rows;
        auto row = read_entry_row(**stmt);
        if (!row)
          return common::make_error(common::ErrorCode::corrupt,
                                    what + ": an entries row has a key id, digest or checksum of the wrong size");
        batch.last_id = row->id;
        auto blob = db->read_blob("blobs", "data", row->id, what);
        JITCACHE_TRY(blob);
        ++batch.checked;
        auto checked = verified_image(row->info, std::move(*blob));
        if (auto* failure = std::get_if<DecodeFailure>(&checked); failure && !failure->unknown_codec) {
          damaged.push_back(Damaged{std::move(*row), std::move(failure->reason)});
        }
      }
      batch.done = rows < limit;
      JITCACHE_TRY(transaction->commit(what));
    }
    // Deleted one by one on the writer, each a short transaction, so PUTs interleave with a VERIFY.
    for (auto& bad : damaged) {
      if (discard_corrupt_entry(database, bad.row.id, bad.row.info, "VERIFY: " + bad.reason)) {
        batch.removed.push_back(RemovedEntry{bad.row.info.key_id, bad.row.info.namespace_id});
      }
    }
    return batch;
  });
}

}  // namespace jitcache::daemon::store
