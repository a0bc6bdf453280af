// Quarantine in SqliteStore (daemon/store/quarantine.hpp): which entry a failure report applies to,
// that lookups never serve a quarantined entry while LIST still shows it, that a PUT makes the key
// live again, and that the quarantined count in the totals stays exact. Real SQLite files; the
// quarantine columns are read back through a separate connection.
#include <catch2/catch.hpp>

#include <sqlite3.h>

#include <algorithm>
#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <proto/digest.hpp>
#include <proto/key.hpp>

#include <daemon/store/sqlite_store.hpp>
#include <tests/support/sample_entries.hpp>
#include <tests/support/sqlite_text_query.hpp>
#include <tests/support/store_dir.hpp>
#include <tests/support/store_fixtures.hpp>

namespace {

using namespace jitcache;
using daemon::store::FailureReport;
using daemon::store::ListQuery;
using daemon::store::PutInput;
using daemon::store::ReportOutcome;
using daemon::store::ReportVerdict;
using daemon::store::SqliteStore;
using daemon::store::SqliteStoreOptions;
using daemon::store::Visibility;
using proto::FailureStage;
using testing::StoreDir;

constexpr std::int64_t k_start_ms = 1'700'000'000'000;
const Visibility k_trusted{0, true};
const Visibility k_uid_1000{1000, false};
const Visibility k_uid_2000{2000, false};

FailureReport sample_report(std::uint32_t cu_result = 209, FailureStage stage = FailureStage::image,
                            std::uint32_t uid = 1000, std::string detail = "no kernel image for sm_90") {
  FailureReport report;
  report.cu_result = cu_result;
  report.stage = stage;
  report.reporter_uid = uid;
  report.detail = std::move(detail);
  return report;
}

// quorum 1 (any uid's report quarantines) unless a test is about the quorum itself.
struct Fixture {
  explicit Fixture(unsigned quorum = 1) : report_quorum(quorum) {}

  unsigned report_quorum;
  StoreDir dir{"jitcache-quarantine-test"};
  std::shared_ptr<std::atomic<std::int64_t>> now = std::make_shared<std::atomic<std::int64_t>>(k_start_ms);
  std::unique_ptr<SqliteStore> store = open();

  std::unique_ptr<SqliteStore> open() {
    SqliteStoreOptions options;
    options.path = dir.db();
    options.reader_count = 2;
    options.report_quorum = report_quorum;
    options.clock = [now = now] { return now->load(); };
    auto opened = SqliteStore::open(options);
    INFO((opened ? std::string() : opened.error().message));
    REQUIRE(opened.ok());
    return std::move(*opened);
  }

  proto::Digest256 put(std::uint64_t seed, std::uint32_t namespace_id, const std::vector<std::uint8_t>& image) {
    PutInput input;
    input.key = testing::sample_key(seed);
    input.namespace_id = namespace_id;
    input.producer = "test";
    input.image = image;
    auto put = store->put(input);
    INFO((put ? std::string() : put.error().message));
    REQUIRE(put.ok());
    return put->key_id;
  }

  std::optional<ReportOutcome> report(const proto::Digest256& key_id, const Visibility& who,
                                      FailureReport report = sample_report()) {
    auto outcome = store->report_failure(key_id, who, report);
    INFO((outcome ? std::string() : outcome.error().message));
    REQUIRE(outcome.ok());
    return *outcome;
  }

  std::optional<daemon::store::Hit> lookup(const proto::Digest256& key_id, const Visibility& who) {
    auto found = testing::lookup_key_id(*store, key_id, who);
    INFO((found ? std::string() : found.error().message));
    REQUIRE(found.ok());
    return std::move(*found);
  }

  std::vector<proto::EntryInfo> list(const Visibility& who) {
    auto page = store->list(ListQuery{}, who);
    REQUIRE(page.ok());
    return page->entries;
  }

  daemon::store::Totals totals() {
    auto totals = store->totals();
    REQUIRE(totals.ok());
    return *totals;
  }

  // Through a connection of its own, so checks do not rely on the code under test.
  std::string query(const std::string& sql) { return testing::query_text(dir.db(), sql, -1); }

  // The quarantine columns of one entry, as "at|result|stage|uid|detail|load_failures".
  std::string quarantine_row(const proto::Digest256& key_id, std::uint32_t namespace_id) {
    return query(
        "SELECT coalesce(quarantined_at_ms, 'NULL') || '|' || coalesce(quarantine_result, 'NULL') || '|' ||"
        " coalesce(quarantine_stage, 'NULL') || '|' || coalesce(quarantine_reporter_uid, 'NULL') || '|' ||"
        " coalesce(quarantine_detail, 'NULL') || '|' || load_failures FROM entries WHERE key_id = x'" +
        proto::to_hex(key_id) + "' AND namespace = " + std::to_string(namespace_id));
  }
};

}  // namespace

TEST_CASE("quarantine: a reported entry is no longer served by key or by prefix, and LIST still shows it") {
  Fixture f;
  const auto image = testing::sample_image(1, 2000);
  const auto key_id = f.put(1, 0, image);
  REQUIRE(f.lookup(key_id, k_uid_1000).has_value());
  *f.now += 1000;

  auto outcome = f.report(key_id, k_uid_1000);
  REQUIRE(outcome.has_value());
  CHECK(outcome->verdict == ReportVerdict::quarantined);
  CHECK(outcome->namespace_id == 0);

  CHECK_FALSE(f.lookup(key_id, k_uid_1000).has_value());
  CHECK_FALSE(f.lookup(key_id, k_trusted).has_value());
  auto by_prefix = testing::lookup_prefix(*f.store, proto::to_hex(key_id).substr(0, 10), k_uid_1000);
  REQUIRE(by_prefix.ok());
  CHECK_FALSE(by_prefix->has_value());

  const auto listed = f.list(k_uid_1000);
  REQUIRE(listed.size() == 1);
  CHECK(listed[0].key_id == key_id);
  CHECK(listed[0].quarantined_at_ms == k_start_ms + 1000);
  CHECK(f.quarantine_row(key_id, 0) == std::to_string(k_start_ms + 1000) + "|209|1|1000|no kernel image for sm_90|1");

  SECTION("and it stays quarantined across a reopen") {
    f.store.reset();
    f.store = f.open();
    CHECK_FALSE(f.lookup(key_id, k_uid_1000).has_value());
    CHECK(f.list(k_trusted).at(0).quarantined_at_ms == k_start_ms + 1000);
  }
}

TEST_CASE("quarantine: a live entry lists with quarantined_at_ms 0 and a hit carries 0") {
  Fixture f;
  const auto key_id = f.put(1, 0, testing::sample_image(1, 100));
  CHECK(f.list(k_trusted).at(0).quarantined_at_ms == 0);
  CHECK(f.lookup(key_id, k_trusted)->info.quarantined_at_ms == 0);
  CHECK(f.quarantine_row(key_id, 0) == "NULL|NULL|NULL|NULL|NULL|0");
}

TEST_CASE("quarantine: a second report says already quarantined, keeps the first reason and counts the failure") {
  Fixture f;
  const auto key_id = f.put(2, 0, testing::sample_image(2, 100));
  REQUIRE(f.report(key_id, k_uid_1000)->verdict == ReportVerdict::quarantined);
  *f.now += 5000;

  auto second = f.report(key_id, k_trusted, sample_report(218, FailureStage::jit, 0, "ptxas fatal"));
  REQUIRE(second.has_value());
  CHECK_FALSE(second->verdict == ReportVerdict::quarantined);
  CHECK(second->namespace_id == 0);
  CHECK(f.quarantine_row(key_id, 0) == std::to_string(k_start_ms) + "|209|1|1000|no kernel image for sm_90|2");
  CHECK(f.totals().entries_quarantined == 1);
}

TEST_CASE("quarantine: a report for a key without a visible entry is not found and changes nothing") {
  Fixture f;
  const auto own = f.put(3, 1000, testing::sample_image(3, 100));
  CHECK_FALSE(f.report(proto::key_id(testing::sample_key(99)), k_trusted).has_value());
  // Another uid's private entry is invisible to uid 2000, so it cannot quarantine it either.
  CHECK_FALSE(f.report(own, k_uid_2000).has_value());
  CHECK(f.lookup(own, k_uid_1000).has_value());
  CHECK(f.quarantine_row(own, 1000) == "NULL|NULL|NULL|NULL|NULL|0");
}

TEST_CASE("quarantine: with the shared entry quarantined the caller's own live entry is served, else a miss") {
  Fixture f;
  const auto shared_image = testing::sample_image(40, 300);
  const auto own_image = testing::sample_image(41, 400);
  const auto key_id = f.put(4, 0, shared_image);
  f.put(4, 1000, own_image);
  REQUIRE(f.lookup(key_id, k_uid_1000)->info.namespace_id == 0);

  // The report applies to what uid 1000 was served: the shared entry.
  auto first = f.report(key_id, k_uid_1000);
  REQUIRE(first.has_value());
  CHECK(first->verdict == ReportVerdict::quarantined);
  CHECK(first->namespace_id == 0);

  auto served = f.lookup(key_id, k_uid_1000);
  REQUIRE(served.has_value());
  CHECK(served->info.namespace_id == 1000);
  CHECK(std::ranges::equal(*served->image, own_image));
  CHECK_FALSE(f.lookup(key_id, k_uid_2000).has_value());
  CHECK_FALSE(f.lookup(key_id, k_trusted).has_value());

  // uid 1000 is now served its own entry, so its next report quarantines that one.
  auto second = f.report(key_id, k_uid_1000);
  REQUIRE(second.has_value());
  CHECK(second->verdict == ReportVerdict::quarantined);
  CHECK(second->namespace_id == 1000);
  CHECK_FALSE(f.lookup(key_id, k_uid_1000).has_value());

  // With nothing live left, a report lands on the shared entry again, already quarantined.
  auto third = f.report(key_id, k_uid_1000);
  REQUIRE(third.has_value());
  CHECK_FALSE(third->verdict == ReportVerdict::quarantined);
  CHECK(third->namespace_id == 0);
  CHECK(f.totals().entries_quarantined == 2);
}

TEST_CASE("quarantine: a PUT that replaces a quarantined entry makes it live again and keeps load_failures") {
  Fixture f;
  const auto key_id = f.put(5, 0, testing::sample_image(50, 300));
  REQUIRE(f.report(key_id, k_uid_1000)->verdict == ReportVerdict::quarantined);
  REQUIRE_FALSE(f.lookup(key_id, k_trusted).has_value());

  const auto rebuilt = testing::sample_image(51, 500);
  f.put(5, 0, rebuilt);
  auto served = f.lookup(key_id, k_uid_1000);
  REQUIRE(served.has_value());
  CHECK(std::ranges::equal(*served->image, rebuilt));
  CHECK(served->info.quarantined_at_ms == 0);
  CHECK(f.list(k_trusted).at(0).quarantined_at_ms == 0);
  CHECK(f.quarantine_row(key_id, 0) == "NULL|NULL|NULL|NULL|NULL|1");
  CHECK(f.totals().entries_quarantined == 0);

  // The rebuilt image can be quarantined afresh, with the new reason.
  auto again = f.report(key_id, k_uid_1000, sample_report(200, FailureStage::load, 1000, ""));
  REQUIRE(again.has_value());
  CHECK(again->verdict == ReportVerdict::quarantined);
  CHECK(f.quarantine_row(key_id, 0) == std::to_string(k_start_ms) + "|200|4|1000||2");
}

TEST_CASE("quarantine: the quarantined count in the totals follows reports, puts and removes") {
  Fixture f;
  const auto a = f.put(6, 0, testing::sample_image(6, 100));
  const auto b = f.put(7, 1000, testing::sample_image(7, 100));
  f.put(8, 0, testing::sample_image(8, 100));
  CHECK(f.totals().entries_quarantined == 0);

  f.report(a, k_uid_1000);
  f.report(b, k_uid_1000);
  CHECK(f.totals().entries_quarantined == 2);
  CHECK(f.totals().entries == 3);

  auto removed = f.store->remove(proto::to_hex(b), k_uid_1000);
  REQUIRE(removed.ok());
  CHECK(*removed == 1);
  CHECK(f.totals().entries_quarantined == 1);
  CHECK(f.query("SELECT COUNT(*) FROM entries WHERE quarantined_at_ms IS NOT NULL") == "1");
}

TEST_CASE("quarantine: counting quarantined entries reads the partial index, not every entry") {
  Fixture f;
  const std::string plan =
      f.query("EXPLAIN QUERY PLAN SELECT COUNT(*) FROM entries WHERE quarantined_at_ms IS NOT NULL");
  INFO(plan);
  CHECK_THAT(plan, Catch::Contains("entries_quarantined"));
  CHECK(f.query("SELECT sql FROM sqlite_schema WHERE name = 'entries_quarantined'") ==
        "CREATE INDEX entries_quarantined ON entries (quarantined_at_ms) WHERE quarantined_at_ms IS NOT NULL");
}

TEST_CASE("quarantine: a report at clock 0 still marks the entry, since 0 means live on the wire") {
  Fixture f;
  const auto key_id = f.put(9, 0, testing::sample_image(9, 100));
  f.now->store(0);
  REQUIRE(f.report(key_id, k_trusted)->verdict == ReportVerdict::quarantined);
  CHECK(f.list(k_trusted).at(0).quarantined_at_ms == 1);
  CHECK_FALSE(f.lookup(key_id, k_trusted).has_value());
}

TEST_CASE(
    "quarantine: an untrusted report hides a shared entry from its reporter only, until report_quorum uids agree") {
  Fixture f(3);
  const auto image = testing::sample_image(60, 700);
  const auto key_id = f.put(60, 0, image);
  const Visibility uid_3000{3000, false};

  auto first = f.report(key_id, k_uid_1000);
  REQUIRE(first.has_value());
  CHECK(first->verdict == ReportVerdict::hidden_from_reporter);
  CHECK(first->reporters == 1);
  CHECK(first->namespace_id == 0);
  CHECK_FALSE(f.lookup(key_id, k_uid_1000).has_value());
  CHECK(std::ranges::equal(*f.lookup(key_id, k_uid_2000)->image, image));
  CHECK(f.lookup(key_id, k_trusted).has_value());
  CHECK(f.list(k_uid_1000).at(0).quarantined_at_ms == 0);
  CHECK(f.quarantine_row(key_id, 0) == "NULL|NULL|NULL|NULL|NULL|1");

  // The same uid again (a flood) adds nothing: neither a reporter nor a counted failure.
  for (int i = 0; i < 5; ++i) {
    auto again = f.report(key_id, k_uid_1000);
    CHECK(again->verdict == ReportVerdict::hidden_from_reporter);
  }
  CHECK(f.quarantine_row(key_id, 0) == "NULL|NULL|NULL|NULL|NULL|1");
  CHECK(f.query("SELECT COUNT(*) FROM failure_reports") == "1");

  auto second = f.report(key_id, k_uid_2000, sample_report(209, FailureStage::image, 2000));
  CHECK(second->verdict == ReportVerdict::hidden_from_reporter);
  CHECK(second->reporters == 2);
  CHECK(f.lookup(key_id, uid_3000).has_value());
  CHECK(f.totals().entries_quarantined == 0);

  *f.now += 1000;
  auto third = f.report(key_id, uid_3000, sample_report(218, FailureStage::jit, 3000, "third"));
  CHECK(third->verdict == ReportVerdict::quarantined);
  CHECK(third->reporters == 3);
  CHECK_FALSE(f.lookup(key_id, k_trusted).has_value());
  CHECK(f.totals().entries_quarantined == 1);
  CHECK(f.quarantine_row(key_id, 0) == std::to_string(k_start_ms + 1000) + "|218|3|3000|third|3");
}

TEST_CASE("quarantine: a trusted report quarantines a shared entry at once, whatever the quorum") {
  Fixture f(3);
  const auto key_id = f.put(61, 0, testing::sample_image(61, 300));
  auto outcome = f.report(key_id, k_trusted, sample_report(209, FailureStage::image, 0));
  CHECK(outcome->verdict == ReportVerdict::quarantined);
  CHECK(outcome->reporters == 0);
  CHECK_FALSE(f.lookup(key_id, k_uid_1000).has_value());
  CHECK(f.query("SELECT COUNT(*) FROM failure_reports") == "0");
}

TEST_CASE(
    "quarantine: with the shared entry hidden the reporter is served its own entry, and its next report lands there") {
  Fixture f(3);
  const auto own_image = testing::sample_image(63, 400);
  const auto key_id = f.put(62, 0, testing::sample_image(62, 300));
  f.put(62, 1000, own_image);

  REQUIRE(f.report(key_id, k_uid_1000)->verdict == ReportVerdict::hidden_from_reporter);
  auto served = f.lookup(key_id, k_uid_1000);
  REQUIRE(served.has_value());
  CHECK(served->info.namespace_id == 1000);
  CHECK(std::ranges::equal(*served->image, own_image));

  auto second = f.report(key_id, k_uid_1000);
  CHECK(second->verdict == ReportVerdict::quarantined);
  CHECK(second->namespace_id == 1000);
  CHECK_FALSE(f.lookup(key_id, k_uid_1000).has_value());
  CHECK(f.lookup(key_id, k_uid_2000)->info.namespace_id == 0);
}

TEST_CASE("quarantine: a new image over a reported shared entry clears its reports, and removing it drops them") {
  Fixture f(3);
  const auto key_id = f.put(64, 0, testing::sample_image(64, 300));
  REQUIRE(f.report(key_id, k_uid_1000)->verdict == ReportVerdict::hidden_from_reporter);
  REQUIRE(f.report(key_id, k_uid_2000, sample_report(209, FailureStage::image, 2000))->reporters == 2);

  const auto rebuilt = testing::sample_image(65, 500);
  f.put(64, 0, rebuilt);
  CHECK(f.query("SELECT COUNT(*) FROM failure_reports") == "0");
  CHECK(std::ranges::equal(*f.lookup(key_id, k_uid_1000)->image, rebuilt));
  // A report of the new image starts the count again.
  CHECK(f.report(key_id, k_uid_2000, sample_report(209, FailureStage::image, 2000))->reporters == 1);

  REQUIRE(f.store->remove(proto::to_hex(key_id), k_trusted).value() == 1);
  CHECK(f.query("SELECT COUNT(*) FROM failure_reports") == "0");
}

TEST_CASE("quarantine: the same bytes written again keep an entry's reports, so the quorum still counts") {
  Fixture f(2);
  const auto image = testing::sample_image(66, 300);
  const auto key_id = f.put(66, 0, image);
  REQUIRE(f.report(key_id, k_uid_1000)->verdict == ReportVerdict::hidden_from_reporter);
  f.put(66, 0, image);  // a recompile for the reporter that came out identical
  CHECK(f.query("SELECT COUNT(*) FROM failure_reports") == "1");
  CHECK_FALSE(f.lookup(key_id, k_uid_1000).has_value());
  CHECK(f.report(key_id, k_uid_2000, sample_report(209, FailureStage::image, 2000))->verdict ==
        ReportVerdict::quarantined);
}

TEST_CASE("quarantine: a shared entry answered from memory before an untrusted report is hidden from its reporter") {
  // The hot image cache answers a hit it served before without reading SQLite
  // (hot_image_cache.hpp "Answered hits"); the report must make it ask SQLite again.
  Fixture f(3);
  const auto image = testing::sample_image(61, 700);
  const auto key_id = f.put(61, 0, image);
  for (int i = 0; i < 3; ++i) REQUIRE(f.lookup(key_id, k_uid_1000).has_value());
  REQUIRE(f.report(key_id, k_uid_1000)->verdict == ReportVerdict::hidden_from_reporter);
  CHECK_FALSE(f.lookup(key_id, k_uid_1000).has_value());
  CHECK(std::ranges::equal(*f.lookup(key_id, k_uid_2000)->image, image));
  for (int i = 0; i < 3; ++i) REQUIRE(f.lookup(key_id, k_uid_2000).has_value());
  auto second = f.report(key_id, k_uid_2000, sample_report(209, FailureStage::image, 2000));
  REQUIRE(second->verdict == ReportVerdict::hidden_from_reporter);
  CHECK_FALSE(f.lookup(key_id, k_uid_2000).has_value());
  CHECK_FALSE(f.lookup(key_id, k_uid_1000).has_value());
}
