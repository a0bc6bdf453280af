#include <common/result.hpp>
#include <daemon/store/verify.hpp>

namespace jitcache::daemon::store {

Result<VerifyReport> run_verify(Maintenance& store, std::size_t max_listed) {
  const auto start = std::chrono::steady_clock::now();
  VerifyReport report;
  auto integrity = store.integrity_check();
  JITCACHE_TRY(integrity);
  report.integrity = std::move(*integrity);

  std::int64_t after_id = 0;
  for (;;) {
    auto batch = store.verify_entries(after_id, k_verify_page_entries);
    JITCACHE_TRY(batch);
    report.entries_checked += batch->checked;
    report.entries_removed += batch->removed.size();
    for (const auto& removed : batch->removed) {
      if (report.removed.size() < max_listed) report.removed.push_back(removed);
    }
    if (batch->done) break;
    after_id = batch->last_id;
  }
  report.duration = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start);
  return report;
}

}  // namespace jitcache::daemon::store
