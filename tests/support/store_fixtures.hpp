// Fixtures for tests of the store on a real SQLite file (tests/unit/test_daemon_store_*.cpp,
// tests/fault/): a SqliteStore opened in a StoreDir, deterministic keys and images, and an
// external connection that touches the file behind the store's back as an operator or a disk
// fault would. Header-only because it needs SQLite and the daemon's store, which the support
// library does not link. Thread safety: test-thread helpers.
#pragma once

#include <catch2/catch.hpp>

#include <sqlite3.h>

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include <proto/digest.hpp>
#include <proto/key.hpp>

#include <common/result.hpp>
#include <daemon/store/eviction_order.hpp>
#include <daemon/store/sqlite_store.hpp>
#include <tests/support/store_dir.hpp>

namespace jitcache::testing {

using daemon::store::Hit;
using daemon::store::ListQuery;
using daemon::store::Miss;
using daemon::store::MissReason;
using daemon::store::PutInput;
using daemon::store::Selector;
using daemon::store::SqliteStore;
using daemon::store::SqliteStoreOptions;
using daemon::store::Visibility;

// A second, independent connection, the way an operator's sqlite3 shell (or a disk fault) would
// touch the file behind the daemon's back.
class ExternalDb {
 public:
  explicit ExternalDb(const std::filesystem::path& path) { REQUIRE(sqlite3_open(path.c_str(), &m_db) == SQLITE_OK); }
  ~ExternalDb() { sqlite3_close(m_db); }
  ExternalDb(const ExternalDb&) = delete;
  ExternalDb& operator=(const ExternalDb&) = delete;

  void exec(const std::string& sql) {
    char* error = nullptr;
    int rc = sqlite3_exec(m_db, sql.c_str(), nullptr, nullptr, &error);
    INFO(sql << ": " << (error ? error : ""));
    sqlite3_free(error);
    REQUIRE(rc == SQLITE_OK);
  }
  std::string text(const std::string& sql) {
    sqlite3_stmt* stmt = nullptr;
    REQUIRE(sqlite3_prepare_v2(m_db, sql.c_str(), -1, &stmt, nullptr) == SQLITE_OK);
    std::string out;
    if (sqlite3_step(stmt) == SQLITE_ROW && sqlite3_column_text(stmt, 0) != nullptr) {
      out = reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0));
    }
    sqlite3_finalize(stmt);
    return out;
  }
  sqlite3* handle() { return m_db; }

 private:
  sqlite3* m_db = nullptr;
};

struct FakeClock {
  std::shared_ptr<std::atomic<std::int64_t>> now = std::make_shared<std::atomic<std::int64_t>>(1'700'000'000'000);
  std::function<std::int64_t()> function() const {
    return [now = now] { return now->load(); };
  }
  void advance(std::int64_t ms) const { now->fetch_add(ms); }
};

inline std::unique_ptr<SqliteStore> open_store(const SqliteStoreOptions& options) {
  auto store = SqliteStore::open(options);
  INFO((store ? std::string() : store.error().message));
  REQUIRE(store.ok());
  return std::move(*store);
}

inline std::unique_ptr<SqliteStore> open_store(const StoreDir& dir, const FakeClock& clock = {}, unsigned readers = 4) {
  SqliteStoreOptions options;
  options.path = dir.db();
  options.reader_count = readers;
  options.clock = clock.function();
  auto store = SqliteStore::open(options);
  INFO((store ? std::string() : store.error().message));
  REQUIRE(store.ok());
  return std::move(*store);
}

// A store of at most max_size_bytes with compression off (its stored bytes are the image bytes), under
// the given eviction order: for tests of who pays for size pressure, which count in whole images.
inline std::unique_ptr<SqliteStore> open_sized_store(const StoreDir& dir, const FakeClock& clock,
                                                     daemon::store::EvictionOrder order, std::uint64_t max_size_bytes) {
  SqliteStoreOptions options;
  options.path = dir.db();
  options.reader_count = 2;
  options.clock = clock.function();
  options.compression_level = 0;
  options.max_size_bytes = max_size_bytes;
  options.eviction_order = order;
  return open_store(options);
}

// The entries of namespace ns, counted in the file itself rather than through the store.
inline std::uint64_t count_in_namespace(const StoreDir& dir, std::uint32_t ns) {
  return static_cast<std::uint64_t>(
      std::stoll(ExternalDb(dir.db()).text("SELECT COUNT(*) FROM entries WHERE namespace = " + std::to_string(ns))));
}

// Each eviction order in turn (a Catch2 generator: the test case runs once per order).
inline daemon::store::EvictionOrder eviction_order_under_test() {
  return GENERATE(daemon::store::EvictionOrder::gdsf, daemon::store::EvictionOrder::lru);
}

inline proto::KeyFields make_key(int seed, std::string arch = "sm_90", std::uint32_t driver_api = 13000,
                                 std::string driver_build = "580.159.04") {
  proto::KeyFields key;
  key.content = proto::sha256(proto::as_bytes("ptx source " + std::to_string(seed)));
  key.arch = std::move(arch);
  key.driver_api = driver_api;
  key.driver_build = std::move(driver_build);
  key.options = "-O3";
  return key;
}

inline std::vector<std::uint8_t> make_image(std::uint64_t seed, std::size_t size) {
  std::vector<std::uint8_t> image(size);
  std::uint64_t state = seed * 6364136223846793005ull + 1442695040888963407ull;
  for (auto& byte : image) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    byte = static_cast<std::uint8_t>(state >> 56);
  }
  return image;
}

// The fast key's content of make_key()'s keys: derived from the key's content digest, so one source
// (one content digest) has one, whatever the arch, driver or options.
inline proto::Checksum128 content_fast_of(const proto::KeyFields& key) {
  return proto::xxh3_128(proto::Bytes(key.content.bytes));
}

inline PutInput make_put(const proto::KeyFields& key, const std::vector<std::uint8_t>& image, std::uint32_t ns = 0,
                         std::string producer = "nvJitLink 13.0") {
  PutInput input;
  input.key = key;
  input.content_fast = content_fast_of(key);
  input.namespace_id = ns;
  input.producer = std::move(producer);
  input.compile_time_us = 4'800'000;
  input.image = image;
  return input;
}

inline proto::Digest256 put_ok(daemon::store::Store& store, const PutInput& input) {
  auto put = store.put(input);
  INFO((put ? std::string() : put.error().message));
  REQUIRE(put.ok());
  return put->key_id;
}

// Store::lookup with a miss as nullopt, for tests that ask only "served or not".
inline common::Result<std::optional<Hit>> find(daemon::store::Store& store, const Selector& selector,
                                               const Visibility& who = {}) {
  auto found = store.lookup(selector, who);
  JITCACHE_TRY(found);
  if (auto* hit = std::get_if<Hit>(&*found)) return std::optional<Hit>(std::move(*hit));
  return std::optional<Hit>();
}
inline common::Result<std::optional<Hit>> lookup_key_id(daemon::store::Store& store, const proto::Digest256& key_id,
                                                        const Visibility& who = {}) {
  return find(store, Selector::key_id(key_id), who);
}
inline common::Result<std::optional<Hit>> lookup_fast_key_id(daemon::store::Store& store,
                                                             const proto::Digest256& fast_key_id,
                                                             const Visibility& who = {}) {
  return find(store, Selector::fast_key_id(fast_key_id), who);
}
inline common::Result<std::optional<Hit>> lookup_prefix(daemon::store::Store& store, const std::string& prefix,
                                                        const Visibility& who = {}) {
  return find(store, Selector::key_id_prefix(prefix), who);
}

inline std::optional<Hit> lookup_ok(daemon::store::Store& store, const proto::Digest256& key_id, Visibility who = {}) {
  auto found = lookup_key_id(store, key_id, who);
  INFO((found ? std::string() : found.error().message));
  REQUIRE(found.ok());
  return std::move(*found);
}

inline std::vector<proto::EntryInfo> list_all(daemon::store::Store& store, ListQuery query, const Visibility& who) {
  std::vector<proto::EntryInfo> all;
  for (int pages = 0; pages < 1000; ++pages) {
    auto page = store.list(query, who);
    INFO((page ? std::string() : page.error().message));
    REQUIRE(page.ok());
    REQUIRE(page->entries.size() <= query.limit);
    all.insert(all.end(), page->entries.begin(), page->entries.end());
    if (page->next_cursor.empty()) return all;
    REQUIRE(page->next_cursor.size() <= proto::k_max_cursor_length);
    query.cursor = page->next_cursor;
  }
  FAIL("LIST never ended");
  return all;
}

}  // namespace jitcache::testing
