// Reads a store's database file from outside the code under test: one column (the first, or with
// `column` -1 the last, as for EXPLAIN QUERY PLAN's detail) of every row of one query, as text, rows
// joined by '\n' ("NULL" for a NULL). Tests of the store check what it
// wrote through this connection of their own. Header-only because it asserts with Catch2 and needs
// SQLite, which the support library does not link (tests that include it link the daemon's core).
// Thread safety: a free function; each call opens and closes its own connection.
#pragma once

#include <sqlite3.h>
#include <catch2/catch.hpp>

#include <string>

namespace jitcache::testing {

inline std::string query_text(const std::string& db_path, const std::string& sql, int column = 0) {
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open(db_path.c_str(), &db) == SQLITE_OK);
  sqlite3_stmt* stmt = nullptr;
  const int rc = sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr);
  std::string out;
  bool first = true;
  while (rc == SQLITE_OK && sqlite3_step(stmt) == SQLITE_ROW) {
    if (!first) out += '\n';
    first = false;
    const unsigned char* text = sqlite3_column_text(stmt, column >= 0 ? column : sqlite3_column_count(stmt) - 1);
    out += text != nullptr ? reinterpret_cast<const char*>(text) : "NULL";
  }
  sqlite3_finalize(stmt);
  sqlite3_close(db);
  INFO(sql);
  REQUIRE(rc == SQLITE_OK);
  return out;
}

}  // namespace jitcache::testing
