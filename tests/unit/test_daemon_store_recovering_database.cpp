// RecoveringDatabase (daemon/store/recovering_database.hpp), the handle through which a SqliteStore
// opened with `recover` reaches its file: a corrupt database, found at open or while serving, is set
// aside under a time-stamped name and replaced by an empty one; files deleted or replaced under the
// store are noticed before the next write. Some of these tests damage the file by hand, others
// have a StoreFaultInjector under the store damage it just before a chosen call.
#include <catch2/catch.hpp>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <optional>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include <daemon/store/set_aside.hpp>
#include <tests/support/store_damage.hpp>
#include <tests/support/store_dir.hpp>
#include <tests/support/store_fault_injector.hpp>
#include <tests/support/store_fixtures.hpp>

namespace {

using namespace jitcache;
using namespace jitcache::testing;

SqliteStoreOptions options_for(const StoreDir& dir) {
  SqliteStoreOptions options;
  options.path = dir.db();
  options.hot_cache_bytes = 0;  // every lookup reads the file
  return options;
}

// `faults`: a StoreFaultInjector under the store, or none.
std::unique_ptr<SqliteStore> open_recovering(const StoreDir& dir, daemon::store::StoreFaults* faults = nullptr) {
  SqliteStoreOptions options = options_for(dir);
  options.recover = true;
  options.faults = faults;
  auto store = SqliteStore::open(options);
  INFO((store ? std::string() : store.error().message));
  REQUIRE(store.ok());
  return std::move(*store);
}

// A closed store file with `count` entries; returns their key ids.
std::vector<proto::Digest256> fill(const StoreDir& dir, int count) {
  std::vector<proto::Digest256> keys;
  auto store = open_store(options_for(dir));
  for (int i = 0; i < count; ++i) keys.push_back(put_ok(*store, make_put(make_key(i), make_image(i, 20'000))));
  return keys;
}

std::vector<std::filesystem::path> set_aside_files(const StoreDir& dir) {
  std::vector<std::filesystem::path> found;
  for (const auto& entry : std::filesystem::directory_iterator(dir.path())) {
    if (entry.path().filename().string().starts_with("store.db.corrupt-")) found.push_back(entry.path());
  }
  return found;
}

void check_set_aside_name(const StoreDir& dir) {
  auto files = set_aside_files(dir);
  REQUIRE_FALSE(files.empty());
  bool has_database = false;
  for (const auto& path : files) {
    const std::string name = path.filename().string();
    INFO(name);
    CHECK(std::regex_match(name, std::regex(R"(store\.db\.corrupt-\d{8}T\d{6}Z(-wal|-shm)?)")));
    has_database = has_database || std::regex_match(name, std::regex(R"(store\.db\.corrupt-\d{8}T\d{6}Z)"));
  }
  CHECK(has_database);
}

}  // namespace

TEST_CASE("recovering store: a database that fails quick_check at open is moved aside and replaced by an empty one") {
  StoreDir dir;
  const auto keys = fill(dir, 30);
  overwrite_pages_after_the_first(dir.db());
  const auto damaged_size = std::filesystem::file_size(dir.db());

  auto store = open_recovering(dir);
  check_set_aside_name(dir);
  for (const auto& path : set_aside_files(dir)) {
    if (!path.string().ends_with("-wal") && !path.string().ends_with("-shm")) {
      CHECK(std::filesystem::file_size(path) == damaged_size);  // kept as it was, for inspection
    }
  }
  auto totals = store->totals();
  REQUIRE(totals.ok());
  CHECK(totals->entries == 0);
  CHECK_FALSE(lookup_ok(*store, keys[0]).has_value());
  // It serves: a PUT and a lookup work on the fresh file at the original path.
  const auto image = make_image(99, 1000);
  REQUIRE(store->put(make_put(make_key(99), image)).ok());
  CHECK(lookup_ok(*store, proto::key_id(make_key(99))).has_value());
  CHECK(ExternalDb(dir.db()).text("PRAGMA quick_check") == "ok");
}

TEST_CASE("recovering store: a file that is not an SQLite database is moved aside at open") {
  StoreDir dir;
  {
    std::ofstream garbage(dir.db(), std::ios::binary);
    for (int i = 0; i < 2000; ++i) garbage << "not a database ";
  }
  auto store = open_recovering(dir);
  check_set_aside_name(dir);
  CHECK(store->totals().ok());
}

TEST_CASE("recovering store: a healthy database is opened as it is") {
  StoreDir dir;
  const auto keys = fill(dir, 3);
  auto store = open_recovering(dir);
  CHECK(set_aside_files(dir).empty());
  CHECK(lookup_ok(*store, keys[2]).has_value());
  CHECK(store->totals()->store_resets == 0);
}

TEST_CASE("recovering store: corruption found while serving resets the store and it keeps serving") {
  StoreDir dir;
  const auto keys = fill(dir, 30);
  auto store = open_recovering(dir);
  overwrite_pages_after_the_first(dir.db());

  // The lookup that reads a damaged page fails (the server answers `internal`) ...
  auto failed = testing::lookup_key_id(*store, keys[5], Visibility{});
  REQUIRE_FALSE(failed.ok());
  CHECK(failed.error().code == common::ErrorCode::corrupt);
  // ... and every later call is served by an empty store on a new file, writer and readers alike.
  check_set_aside_name(dir);
  auto totals = store->totals();
  REQUIRE(totals.ok());
  CHECK(totals->store_resets == 1);
  CHECK(totals->entries == 0);
  CHECK_FALSE(lookup_ok(*store, keys[6]).has_value());
  const auto image = make_image(77, 5000);
  REQUIRE(store->put(make_put(make_key(77), image)).ok());
  auto found = lookup_ok(*store, proto::key_id(make_key(77)));
  REQUIRE(found.has_value());
  CHECK(std::ranges::equal(*found->image, image));
  CHECK(ExternalDb(dir.db()).text("SELECT COUNT(*) FROM entries") == "1");
}

TEST_CASE("recovering store: many calls failing on one corruption at once reset the store once and none crashes") {
  StoreDir dir;
  const auto keys = fill(dir, 60);
  auto store = open_recovering(dir);
  overwrite_pages_after_the_first(dir.db());

  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 40; ++i) {
        const auto& key = keys[static_cast<std::size_t>((t * 7 + i) % static_cast<int>(keys.size()))];
        if (!testing::lookup_key_id(*store, key, Visibility{}).ok()) ++failures;
        if (i % 10 == 0) (void)store->put(make_put(make_key(1000 + t * 100 + i), make_image(i, 2000)));
        (void)store->totals();
      }
    });
  }
  for (auto& thread : threads) thread.join();
  CHECK(failures.load() >= 1);
  auto totals = store->totals();
  REQUIRE(totals.ok());
  CHECK(totals->store_resets == 1);
  CHECK(ExternalDb(dir.db()).text("PRAGMA quick_check") == "ok");
}

TEST_CASE("set aside: a second reset within the same second gets its own name") {
  StoreDir dir;
  const auto when = std::chrono::system_clock::time_point(std::chrono::seconds(1'796'000'000));
  CHECK(daemon::store::utc_time_stamp(when) == "20261130T005320Z");
  for (int i = 0; i < 2; ++i) {
    std::ofstream(dir.db()) << "x";
    std::ofstream(dir.db().string() + "-wal") << "w";
    auto moved = daemon::store::set_aside_database(dir.db(), when);
    REQUIRE(moved.ok());
    CHECK(std::filesystem::exists(*moved));
    CHECK(std::filesystem::exists(moved->string() + "-wal"));
    CHECK_FALSE(std::filesystem::exists(dir.db()));
  }
  CHECK(std::filesystem::exists(dir.path() / "store.db.corrupt-20261130T005320Z"));
  CHECK(std::filesystem::exists(dir.path() / "store.db.corrupt-20261130T005320Z-2"));
}

TEST_CASE("recovering store: a reset tells the row listener that every row is gone once the store serves again") {
  StoreDir dir;
  const auto keys = fill(dir, 30);
  auto store = open_recovering(dir);
  std::vector<std::int64_t> dropped;
  std::optional<std::uint64_t> entries_seen_by_listener;
  store->on_row_dropped([&](std::int64_t row_id) {
    dropped.push_back(row_id);
    // The publisher asks the store about rows from inside its own lock: the listener must be told
    // outside the reset's gate, or this call would wait for ever.
    auto totals = store->totals();
    if (totals.ok()) entries_seen_by_listener = totals->entries;
  });
  overwrite_pages_after_the_first(dir.db());
  REQUIRE_FALSE(testing::lookup_key_id(*store, keys[5], Visibility{}).ok());
  REQUIRE(dropped == std::vector<std::int64_t>{daemon::store::k_every_row});
  CHECK(entries_seen_by_listener == std::optional<std::uint64_t>(0));
  // The new store tells the same listener about its own rows (a PUT names its row too: a new row
  // may reuse a deleted one's id).
  const auto put = store->put(make_put(make_key(77), make_image(77, 5000)));
  REQUIRE(put.ok());
  dropped.clear();
  REQUIRE(store->remove(proto::to_hex(put->key_id), Visibility{0, true}).ok());
  CHECK(dropped == std::vector<std::int64_t>{put->row_id});
}

TEST_CASE(
    "recovering store: database files deleted under it are noticed at the next write, which goes to a new database") {
  StoreDir dir;
  auto store = open_recovering(dir);
  const auto before = put_ok(*store, make_put(make_key(1), make_image(1, 5000)));
  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(dir.db().string() + suffix);

  const auto after = put_ok(*store, make_put(make_key(2), make_image(2, 5000)));
  auto totals = store->totals();
  REQUIRE(totals.ok());
  CHECK(totals->store_reopens == 1);
  CHECK(totals->store_resets == 0);
  CHECK(totals->entries == 1);
  CHECK_FALSE(lookup_ok(*store, before).has_value());
  CHECK(lookup_ok(*store, after).has_value());
  CHECK(set_aside_files(dir).empty());  // nothing to set aside: the files were gone
  store.reset();

  // The write is in the file now at the path, not in the unlinked one.
  auto reopened = open_recovering(dir);
  CHECK(lookup_ok(*reopened, after).has_value());
}

TEST_CASE("recovering store: a database moved into its path under it is opened at the next flush, not set aside") {
  StoreDir elsewhere{"jitcache-store-elsewhere"};
  const auto moved_in = fill(elsewhere, 3);
  StoreDir dir;
  auto store = open_recovering(dir);
  const auto original = put_ok(*store, make_put(make_key(10), make_image(10, 5000)));
  std::filesystem::rename(elsewhere.db(), dir.db());  // as `mv backup.db jitcache.db` would
  std::filesystem::remove(dir.db().string() + "-wal");
  std::filesystem::remove(dir.db().string() + "-shm");

  REQUIRE(store->flush_usage().ok());
  auto totals = store->totals();
  REQUIRE(totals.ok());
  CHECK(totals->store_reopens == 1);
  CHECK(totals->entries == 3);
  for (const auto& key_id : moved_in) CHECK(lookup_ok(*store, key_id).has_value());
  CHECK_FALSE(lookup_ok(*store, original).has_value());
  CHECK(set_aside_files(dir).empty());

  // Reads alone never reopen: only writes and flushes look at the files.
  std::filesystem::remove(dir.db());
  CHECK(lookup_ok(*store, moved_in[0]).has_value());
  CHECK(store->totals()->store_reopens == 1);
}

TEST_CASE("recovering store: corruption met by the third lookup fails that lookup only, and a new database serves on") {
  StoreDir dir;
  const auto keys = fill(dir, 30);
  StoreFaultInjector faults(dir.db());
  auto opened = open_recovering(dir, &faults);
  SqliteStore& store = *opened;
  std::vector<std::int64_t> dropped;
  store.on_row_dropped([&](std::int64_t row_id) { dropped.push_back(row_id); });
  faults.corrupt_before(StoreCall::lookup, 3);

  CHECK(lookup_ok(store, keys[0]).has_value());
  CHECK(lookup_ok(store, keys[1]).has_value());
  auto failed = store.lookup(Selector::key_id(keys[5]), Visibility{});
  REQUIRE_FALSE(failed.ok());
  CHECK(failed.error().code == common::ErrorCode::corrupt);
  check_set_aside_name(dir);
  CHECK(dropped == std::vector<std::int64_t>{daemon::store::k_every_row});

  CHECK_FALSE(lookup_ok(store, keys[6]).has_value());
  const auto image = make_image(103, 5000);
  REQUIRE(store.put(make_put(make_key(103), image)).ok());
  auto totals = store.totals();
  REQUIRE(totals.ok());
  CHECK(totals->store_resets == 1);
  CHECK(totals->entries == 1);
  auto found = lookup_ok(store, proto::key_id(make_key(103)));
  REQUIRE(found.has_value());
  CHECK(std::ranges::equal(*found->image, image));
  CHECK(faults.calls(StoreCall::lookup) == 5);
}

TEST_CASE("recovering store: an error the store did not meet itself resets nothing") {
  StoreDir dir;
  const auto keys = fill(dir, 3);
  StoreFaultInjector faults(dir.db());
  auto opened = open_recovering(dir, &faults);
  SqliteStore& store = *opened;
  faults.fail_nth(StoreCall::lookup, 1, common::ErrorCode::corrupt);
  auto injected = store.lookup(Selector::key_id(keys[0]), Visibility{});
  REQUIRE_FALSE(injected.ok());
  CHECK(injected.error().code == common::ErrorCode::corrupt);
  CHECK(lookup_ok(store, keys[0]).has_value());
  CHECK(store.totals()->store_resets == 0);
  CHECK(set_aside_files(dir).empty());
}

TEST_CASE(
    "recovering store: files deleted just before a flush are noticed by that flush, which writes to the new database") {
  StoreDir dir;
  StoreFaultInjector faults(dir.db());
  auto opened = open_recovering(dir, &faults);
  SqliteStore& store = *opened;
  const auto before = put_ok(store, make_put(make_key(1), make_image(1, 5000)));
  REQUIRE(lookup_ok(store, before).has_value());  // a hit to flush
  faults.delete_files_before(StoreCall::flush_usage, 1);
  REQUIRE(store.flush_usage().ok());
  auto totals = store.totals();
  REQUIRE(totals.ok());
  CHECK(totals->store_reopens == 1);
  CHECK(totals->store_resets == 0);
  CHECK(totals->entries == 0);
  CHECK(std::filesystem::exists(dir.db()));
}
