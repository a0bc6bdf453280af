// EXPLAIN's store queries (daemon/store/near_entries_sql.hpp) cost a bounded number of index
// probes whatever the store holds: their plans search an index with no sort and no scan, the
// SQLite VM steps they take do not grow when another namespace doubles its entries of the same
// content, and an untrusted caller's near_entries reads nothing of a namespace it may not see.
// Real SQLite files; the crowd of entries is planted by SQL, as a tenant's PUTs would leave it.
#include <catch2/catch.hpp>

#include <sqlite3.h>

#include <string>
#include <vector>

#include <daemon/store/near_entries_sql.hpp>
#include <daemon/store/sqlite_store.hpp>
#include <tests/support/sqlite_text_query.hpp>
#include <tests/support/store_dir.hpp>
#include <tests/support/store_fixtures.hpp>

namespace {

using namespace jitcache;
using daemon::store::Visibility;
using testing::ExternalDb;
using testing::StoreDir;

constexpr std::uint32_t k_crowd_namespace = 1001;  // uid B: many entries of one content
constexpr std::uint32_t k_asker = 2000;            // uid A: an untrusted caller with nothing stored
constexpr unsigned k_limit = 64;

// Doubles the rows of `content` in namespace k_crowd_namespace (copies of them under new key ids).
void double_crowd(ExternalDb& db) {
  db.exec(
      "INSERT INTO entries (key_id, namespace, key_schema, content_digest, arch, driver_api, driver_build, options,"
      " producer, codec, raw_size, stored_size, checksum, created_at_ms, last_used_at_ms, hits, compile_time_us,"
      " content_fast, fast_key_id) SELECT randomblob(32), " +
      std::to_string(k_crowd_namespace) +
      ", key_schema, content_digest, arch, driver_api, driver_build, options, producer, codec, raw_size,"
      " stored_size, checksum, created_at_ms, last_used_at_ms, hits, compile_time_us, content_fast,"
      " randomblob(32) FROM entries");
}

struct Query {
  const std::string* sql;
  bool by_content;
  std::optional<std::uint32_t> namespace_id;
};

// The VM steps one run of `query` takes to its last row.
int vm_steps(const std::string& db_path, const Query& query, const proto::KeyFields& key) {
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open(db_path.c_str(), &db) == SQLITE_OK);
  sqlite3_stmt* stmt = nullptr;
  REQUIRE(sqlite3_prepare_v2(db, query.sql->c_str(), -1, &stmt, nullptr) == SQLITE_OK);
  const proto::Digest256 id = proto::key_id(key);
  sqlite3_bind_blob(stmt, 1, id.bytes.data(), static_cast<int>(id.bytes.size()), SQLITE_TRANSIENT);
  if (query.by_content) {
    sqlite3_bind_blob(stmt, 2, key.content.bytes.data(), static_cast<int>(key.content.bytes.size()), SQLITE_TRANSIENT);
  }
  sqlite3_bind_int64(stmt, 3, k_asker);
  sqlite3_bind_int64(stmt, 4, k_limit);
  if (query.namespace_id) sqlite3_bind_int64(stmt, 5, *query.namespace_id);
  int rows = 0;
  while (sqlite3_step(stmt) == SQLITE_ROW) ++rows;
  const int steps = sqlite3_stmt_status(stmt, SQLITE_STMTSTATUS_VM_STEP, 0);
  CHECK(sqlite3_stmt_status(stmt, SQLITE_STMTSTATUS_SORT, 0) == 0);
  CHECK(sqlite3_stmt_status(stmt, SQLITE_STMTSTATUS_FULLSCAN_STEP, 0) == 0);
  CHECK(rows <= static_cast<int>(k_limit));
  sqlite3_finalize(stmt);
  sqlite3_close(db);
  return steps;
}

}  // namespace

TEST_CASE("explain plan: every near_entries query searches an index, with no sort and no scan") {
  StoreDir dir;
  testing::FakeClock clock;
  auto store = testing::open_store(dir, clock);
  testing::put_ok(*store, testing::make_put(testing::make_key(1), testing::make_image(1, 1000)));
  for (const std::string* sql : {&daemon::store::k_near_key_sql, &daemon::store::k_near_key_in_namespace_sql,
                                 &daemon::store::k_near_content_sql, &daemon::store::k_near_content_in_namespace_sql}) {
    const std::string plan = testing::query_text(dir.db(), "EXPLAIN QUERY PLAN " + *sql, -1);
    INFO(*sql << "\n" << plan);
    CHECK(plan.find("SEARCH entries USING INDEX entries_by_") != std::string::npos);
    CHECK(plan.find("TEMP B-TREE") == std::string::npos);
    CHECK(plan.find("SCAN ") == std::string::npos);
  }
}

TEST_CASE("explain plan: the steps of each query do not grow with another namespace's entries of the content") {
  StoreDir dir;
  testing::FakeClock clock;
  auto store = testing::open_store(dir, clock);
  const proto::KeyFields key = testing::make_key(1);
  testing::put_ok(*store, testing::make_put(key, testing::make_image(1, 1000)));
  testing::put_ok(*store, testing::make_put(testing::make_key(1, "sm_80"), testing::make_image(2, 1000)));
  const std::vector<Query> queries{
      {&daemon::store::k_near_key_sql, false, std::nullopt},
      {&daemon::store::k_near_key_in_namespace_sql, false, k_asker},
      {&daemon::store::k_near_content_sql, true, std::nullopt},
      {&daemon::store::k_near_content_in_namespace_sql, true, 0u},
      {&daemon::store::k_near_content_in_namespace_sql, true, k_asker},
  };
  ExternalDb db(dir.db());
  for (int i = 0; i < 12; ++i) double_crowd(db);  // 8 190 rows of the content in the crowd's namespace
  std::vector<int> before;
  for (const Query& query : queries) before.push_back(vm_steps(dir.db(), query, key));
  for (int i = 0; i < 2; ++i) double_crowd(db);  // 32 766
  REQUIRE(db.text("SELECT COUNT(*) FROM entries WHERE namespace = " + std::to_string(k_crowd_namespace)) == "32766");
  for (std::size_t i = 0; i < queries.size(); ++i) {
    INFO(*queries[i].sql);
    CHECK(vm_steps(dir.db(), queries[i], key) == before[i]);
  }
}

TEST_CASE("explain plan: an untrusted caller's near entries come from the shared namespace and its own only") {
  StoreDir dir;
  testing::FakeClock clock;
  auto store = testing::open_store(dir, clock);
  const proto::KeyFields key = testing::make_key(1);
  testing::put_ok(*store, testing::make_put(key, testing::make_image(1, 1000), k_crowd_namespace));
  testing::put_ok(*store, testing::make_put(testing::make_key(1, "sm_80"), testing::make_image(2, 1000)));
  testing::put_ok(*store, testing::make_put(testing::make_key(1, "sm_86"), testing::make_image(3, 1000), k_asker));
  ExternalDb db(dir.db());
  for (int i = 0; i < 8; ++i) double_crowd(db);

  auto untrusted =
      store->diagnosis().near_entries(proto::key_id(key), key.content, Visibility{k_asker, false}, k_asker, k_limit);
  REQUIRE(untrusted);
  REQUIRE(untrusted->size() == 2);
  CHECK((*untrusted)[0].info.namespace_id == 0);
  CHECK((*untrusted)[0].info.key.arch == "sm_80");
  CHECK((*untrusted)[1].info.namespace_id == k_asker);
  auto by_id =
      store->diagnosis().near_entries(proto::key_id(key), std::nullopt, Visibility{k_asker, false}, k_asker, k_limit);
  REQUIRE(by_id);
  CHECK(by_id->empty());

  auto trusted = store->diagnosis().near_entries(proto::key_id(key), key.content, Visibility{0, true}, 0, k_limit);
  REQUIRE(trusted);
  CHECK(trusted->size() == k_limit);
  CHECK((*trusted)[0].info.key == key);  // the key's own first
  CHECK((*trusted)[1].info.namespace_id == 0);
}
