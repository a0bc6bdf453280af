// Faults under the SQLite store (daemon/store/store_faults.hpp): a StoreFaultInjector at the one
// seam that SqliteStore and the classes beside it (SqliteSources, SqliteEntryTransfer,
// SqliteDiagnosis) share makes any call of any of them fail, before it reaches the database or
// half-way through one of its statements; what a failure costs is that call alone.
#include <catch2/catch.hpp>

#include <algorithm>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <daemon/bundle/bundle_entry.hpp>
#include <daemon/store/sqlite_store.hpp>
#include <daemon/store/store_call.hpp>
#include <proto/content_digest.hpp>
#include <tests/support/store_dir.hpp>
#include <tests/support/store_fault_injector.hpp>
#include <tests/support/store_fixtures.hpp>

namespace {

using namespace jitcache;
using namespace jitcache::testing;
using common::ErrorCode;
using daemon::store::ExportFilter;
using daemon::store::HotSetQuery;
using daemon::store::ImportOptions;

std::unique_ptr<SqliteStore> open_faulty(const StoreDir& dir, StoreFaultInjector& faults,
                                         std::uint64_t source_budget = 0) {
  SqliteStoreOptions options;
  options.path = dir.db();
  options.reader_count = 2;
  options.source_budget_bytes = source_budget;
  options.faults = &faults;
  return open_store(options);
}

template <class R>
std::optional<common::Error> failure_of(const R& result) {
  if (result) return std::nullopt;
  return result.error();
}

// Every entry of `store` as an export hands it over, in key id order.
std::vector<daemon::bundle::BundleEntry> exported(SqliteStore& store) {
  std::vector<daemon::bundle::BundleEntry> entries;
  auto written = store.transfer().export_entries(
      ExportFilter{}, [](std::uint64_t) -> common::Result<void> { return {}; },
      [&](const daemon::bundle::BundleEntry& entry) -> common::Result<void> {
        entries.push_back(entry);
        return {};
      });
  INFO((written ? std::string() : written.error().message));
  REQUIRE(written);
  CHECK(*written == entries.size());
  return entries;
}

// An export of everything that keeps nothing: its count, or its error.
common::Result<std::uint64_t> exported_or_error(SqliteStore& store) {
  return store.transfer().export_entries(
      ExportFilter{}, [](std::uint64_t) -> common::Result<void> { return {}; },
      [](const daemon::bundle::BundleEntry&) -> common::Result<void> { return {}; });
}

// Hands `entries` to an import one by one.
std::function<common::Result<std::optional<daemon::bundle::BundleEntry>>()> yielding(
    const std::vector<daemon::bundle::BundleEntry>& entries) {
  auto next = std::make_shared<std::size_t>(0);
  return [&entries, next]() -> common::Result<std::optional<daemon::bundle::BundleEntry>> {
    if (*next == entries.size()) return std::optional<daemon::bundle::BundleEntry>();
    return std::optional<daemon::bundle::BundleEntry>(entries[(*next)++]);
  };
}

ImportOptions import_of(const std::vector<daemon::bundle::BundleEntry>& entries) {
  ImportOptions options;
  for (const auto& entry : entries) options.stored_bytes += entry.image.size();
  options.entry_count = entries.size();
  return options;
}

std::uint64_t entries_in(SqliteStore& store) {
  auto totals = store.totals();
  REQUIRE(totals);
  return totals->entries;
}

// A PTX source and the key of an entry compiled from it (sources.hpp keeps it by content digest).
std::vector<std::uint8_t> sample_source() {
  std::string text;
  for (int i = 0; i < 100; ++i) text += "  mul.lo.s32 %r" + std::to_string(i % 5) + ", %r1, %r2;\n";
  return {text.begin(), text.end()};
}

PutInput compiled_put(const std::vector<std::uint8_t>& source) {
  static const std::vector<std::uint8_t> image = make_image(1, 800);  // PutInput::image is a view
  proto::KeyFields key = make_key(1);
  key.content = proto::content_digest(proto::Bytes(source));
  PutInput input = make_put(key, image);
  input.content_fast = proto::xxh3_128(proto::Bytes(source));
  input.source = proto::Bytes(source);
  input.worker_options = "-O3";
  input.compile_time_us = 2'000'000;
  return input;
}

}  // namespace

TEST_CASE("store faults: every call of every class of the store can be made to fail, and the next call is served") {
  StoreDir dir{"jitcache-store-faults-test"};
  StoreFaultInjector faults;
  auto store = open_faulty(dir, faults, 1 << 20);
  const std::vector<std::uint8_t> source = sample_source();
  const PutInput compiled = compiled_put(source);
  const proto::Digest256 key_id = put_ok(*store, compiled);
  const proto::Digest256 absent = proto::key_id(make_key(99));
  const std::vector<daemon::bundle::BundleEntry> none;
  int put_seed = 100;

  using Call = std::function<std::optional<common::Error>()>;
  const std::vector<std::pair<StoreCall, Call>> calls{
      {StoreCall::lookup, [&] { return failure_of(store->lookup(daemon::store::Selector::key_id(key_id), {})); }},
      {StoreCall::put,
       [&] {
         ++put_seed;
         return failure_of(store->put(make_put(make_key(put_seed), make_image(put_seed, 500))));
       }},
      {StoreCall::remove,
       [&] {
         return failure_of(store->remove(proto::to_hex(absent), Visibility{0, true}));
       }},
      {StoreCall::list,
       [&] {
         return failure_of(store->list(ListQuery{}, Visibility{0, true}));
       }},
      {StoreCall::totals, [&] { return failure_of(store->totals()); }},
      {StoreCall::flush_usage, [&] { return failure_of(store->flush_usage()); }},
      {StoreCall::collect_garbage, [&] { return failure_of(store->collect_garbage()); }},
      {StoreCall::integrity_check, [&] { return failure_of(store->integrity_check()); }},
      {StoreCall::verify_entries, [&] { return failure_of(store->verify_entries(0, 10)); }},
      {StoreCall::namespace_totals, [&] { return failure_of(store->namespace_totals(10)); }},
      {StoreCall::report_failure,
       [&] { return failure_of(store->report_failure(absent, Visibility{}, daemon::store::FailureReport{})); }},
      {StoreCall::publishable_entry, [&] { return failure_of(store->publishable_entry(1, absent)); }},
      {StoreCall::note_published_hit, [&] { return failure_of(store->note_published_hit(absent)); }},
      {StoreCall::near_entries,
       [&] {
         return failure_of(store->diagnosis().near_entries(key_id, std::nullopt, Visibility{0, true}, 0, 10));
       }},
      {StoreCall::hot_set,
       [&] {
         return failure_of(store->sources().hot_set(HotSetQuery{13000, "580.65.06", "", 10}));
       }},
      {StoreCall::kept_source, [&] { return failure_of(store->sources().kept_source(compiled.key.content)); }},
      {StoreCall::has_shared_entry, [&] { return failure_of(store->sources().has_shared_entry(key_id)); }},
      {StoreCall::known_drivers, [&] { return failure_of(store->sources().known_drivers()); }},
      {StoreCall::has_entries_of,
       [&] { return failure_of(store->sources().has_entries_of(13000, "580.65.06", "sm_90")); }},
      {StoreCall::export_entries, [&] { return failure_of(exported_or_error(*store)); }},
      {StoreCall::presence, [&] { return failure_of(store->transfer().presence(0, key_id)); }},
      {StoreCall::import_entries,
       [&] { return failure_of(store->transfer().import_entries(import_of(none), yielding(none))); }},
  };
  REQUIRE(calls.size() == daemon::store::k_store_call_count);
  for (const auto& [call, run] : calls) {
    const std::string name(daemon::store::store_call_name(call));
    INFO("store call " << name);
    const unsigned calls_before = faults.calls(call);
    faults.fail_nth(call, 1, ErrorCode::unavailable);
    const auto failed = run();
    REQUIRE(failed.has_value());
    CHECK(failed->code == ErrorCode::unavailable);
    CHECK_THAT(failed->message, Catch::Contains("injected fault") && Catch::Contains(name));
    const auto served = run();
    INFO((served ? served->message : std::string()));
    CHECK_FALSE(served.has_value());
    CHECK(faults.calls(call) == calls_before + 2);  // each counted once, however many runs it makes
  }
  // What the failed calls touched is all still there.
  CHECK(lookup_ok(*store, key_id).has_value());
  auto kept = store->sources().kept_source(compiled.key.content);
  REQUIRE(kept);
  REQUIRE(kept->has_value());
  CHECK(**kept == source);
}

TEST_CASE(
    "store faults: a bundle import that fails half-way, the disk full at its third image or at its commit, imports "
    "nothing, says what failed, and a retry imports it all") {
  StoreDir source_dir{"jitcache-store-faults-test"};
  std::vector<daemon::bundle::BundleEntry> bundle;
  {
    auto source = open_store(source_dir);
    for (int i = 0; i < 5; ++i) put_ok(*source, make_put(make_key(10 + i), make_image(10 + i, 3000)));
    bundle = exported(*source);
  }
  REQUIRE(bundle.size() == 5);

  StoreDir dir{"jitcache-store-faults-test"};
  StoreFaultInjector faults;
  auto store = open_faulty(dir, faults);
  const std::vector<std::uint8_t> own_image = make_image(1, 3000);
  const proto::Digest256 own = put_ok(*store, make_put(make_key(1), own_image));
  put_ok(*store, make_put(make_key(2), make_image(2, 3000)));

  auto check_nothing_imported = [&] {
    CHECK(entries_in(*store) == 2);
    for (int i = 0; i < 5; ++i) CHECK_FALSE(lookup_ok(*store, proto::key_id(make_key(10 + i))).has_value());
    auto hit = lookup_ok(*store, own);
    REQUIRE(hit.has_value());
    CHECK(std::ranges::equal(*hit->image, own_image));
  };

  faults.fail_step("INSERT INTO blobs", 3, ErrorCode::no_space);
  auto full = store->transfer().import_entries(import_of(bundle), yielding(bundle));
  REQUIRE_FALSE(full.ok());
  CHECK(full.error().code == ErrorCode::no_space);
  CHECK_THAT(full.error().message,
             Catch::Contains("importing a bundle into namespace 0") && Catch::Contains("injected fault"));
  CHECK(faults.failed_steps() == 1);
  check_nothing_imported();

  faults.fail_step("COMMIT", 1, ErrorCode::io);
  auto uncommitted = store->transfer().import_entries(import_of(bundle), yielding(bundle));
  REQUIRE_FALSE(uncommitted.ok());
  CHECK(uncommitted.error().code == ErrorCode::io);
  CHECK(faults.failed_steps() == 2);
  check_nothing_imported();

  auto imported = store->transfer().import_entries(import_of(bundle), yielding(bundle));
  INFO((imported ? std::string() : imported.error().message));
  REQUIRE(imported.ok());
  CHECK(imported->imported == 5);
  CHECK(imported->skipped == 0);
  CHECK(entries_in(*store) == 7);
  for (int i = 0; i < 5; ++i) {
    auto hit = lookup_ok(*store, proto::key_id(make_key(10 + i)));
    REQUIRE(hit.has_value());
    CHECK(std::ranges::equal(*hit->image, make_image(10 + i, 3000)));
  }
}

TEST_CASE("store faults: an export that fails half-way ends with a clear error and leaves the store as it was") {
  StoreDir dir{"jitcache-store-faults-test"};
  StoreFaultInjector faults;
  auto store = open_faulty(dir, faults);
  std::vector<proto::Digest256> keys;
  for (int i = 0; i < 4; ++i) keys.push_back(put_ok(*store, make_put(make_key(i), make_image(i, 2000))));

  // Each entry's kept source is looked for as it is exported: the third look fails.
  faults.fail_step("FROM entry_sources AS es JOIN sources", 3, ErrorCode::io);
  std::uint64_t announced = 0;
  std::vector<proto::Digest256> handed_over;
  auto failed = store->transfer().export_entries(
      ExportFilter{},
      [&](std::uint64_t count) -> common::Result<void> {
        announced = count;
        return {};
      },
      [&](const daemon::bundle::BundleEntry& entry) -> common::Result<void> {
        handed_over.push_back(proto::key_id(entry.key));
        return {};
      });
  REQUIRE_FALSE(failed.ok());
  CHECK(failed.error().code == ErrorCode::io);
  CHECK_THAT(failed.error().message, Catch::Contains("exporting a kept source") && Catch::Contains("injected fault"));
  CHECK(announced == 4);
  CHECK(handed_over.size() == 2);

  // Nothing was lost, nothing is held: the entries are served, a PUT writes, and the next export
  // has them all.
  CHECK(entries_in(*store) == 4);
  for (const auto& key : keys) CHECK(lookup_ok(*store, key).has_value());
  put_ok(*store, make_put(make_key(9), make_image(9, 2000)));
  CHECK(exported(*store).size() == 5);
}

TEST_CASE(
    "store faults: a failing read of a kept source or of the hot set fails that read alone: the source is kept and "
    "read back next time") {
  StoreDir dir{"jitcache-store-faults-test"};
  StoreFaultInjector faults;
  auto store = open_faulty(dir, faults, 1 << 20);
  const std::vector<std::uint8_t> source = sample_source();
  const PutInput compiled = compiled_put(source);
  const proto::Digest256 key_id = put_ok(*store, compiled);

  faults.fail_step("SELECT id, codec, raw_size, data FROM sources", 1, ErrorCode::io);
  auto failed = store->sources().kept_source(compiled.key.content);
  REQUIRE_FALSE(failed.ok());
  CHECK(failed.error().code == ErrorCode::io);
  CHECK_THAT(failed.error().message, Catch::Contains("reading a kept source"));
  auto totals = store->totals();
  REQUIRE(totals);
  CHECK(totals->sources == 1);  // a read that failed is not a damaged source
  auto kept = store->sources().kept_source(compiled.key.content);
  REQUIRE(kept);
  REQUIRE(kept->has_value());
  CHECK(**kept == source);

  const HotSetQuery query{compiled.key.driver_api, compiled.key.driver_build, compiled.key.arch, 10};
  faults.fail_every_step("ORDER BY (e.hits + 1) * e.compile_time_us", ErrorCode::io);
  for (int i = 0; i < 2; ++i) {
    auto hot = store->sources().hot_set(query);
    REQUIRE_FALSE(hot.ok());
    CHECK_THAT(hot.error().message, Catch::Contains("reading the hot set"));
    CHECK(lookup_ok(*store, key_id).has_value());
  }
  faults.heal();
  auto hot = store->sources().hot_set(query);
  REQUIRE(hot);
  REQUIRE(hot->size() == 1);
  CHECK(hot->front().key == compiled.key);
  CHECK(hot->front().hits == 2);  // the lookups served meanwhile, written before the ranking
}
