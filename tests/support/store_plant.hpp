// Writes an image into a stored entry from outside the daemon, through SQLite, as an older
// jitcached (which stored whatever a PUT carried) could have left it: for the tests of what
// clients do with a stored image the driver refuses, now that a PUT of a wrong-arch cubin is
// refused (docs/entry-format.md "What a PUT may store"). The entry keeps its key; its image becomes
// `image`, raw, with a matching size and checksum, so only the driver can tell it is wrong.
// Header-only because it asserts with Catch2 and needs SQLite (link SQLite::SQLite3). The daemon
// may be running: the write waits for its lock. Thread safety: a free function.
#pragma once

#include <sqlite3.h>
#include <catch2/catch.hpp>

#include <string>

#include <proto/digest.hpp>

namespace jitcache::testing {

// `key_id_hex`: the entry's key id, lowercase hex, as LOOKUP and `jitcache ls` show it.
inline void plant_image(const std::string& db_path, const std::string& key_id_hex, proto::Bytes image) {
  const proto::Checksum128 checksum = proto::xxh3_128(image);
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open(db_path.c_str(), &db) == SQLITE_OK);
  sqlite3_busy_timeout(db, 5000);
  sqlite3_stmt* stmt = nullptr;
  REQUIRE(sqlite3_prepare_v2(db,
                             "UPDATE blobs SET data = ?2 WHERE entry_id ="
                             " (SELECT id FROM entries WHERE lower(hex(key_id)) = ?1)",
                             -1, &stmt, nullptr) == SQLITE_OK);
  sqlite3_bind_text(stmt, 1, key_id_hex.c_str(), -1, SQLITE_TRANSIENT);
  sqlite3_bind_blob(stmt, 2, image.data(), static_cast<int>(image.size()), SQLITE_TRANSIENT);
  CHECK(sqlite3_step(stmt) == SQLITE_DONE);
  CHECK(sqlite3_changes(db) == 1);
  sqlite3_finalize(stmt);
  REQUIRE(sqlite3_prepare_v2(db,
                             "UPDATE entries SET codec = 0, raw_size = ?2, stored_size = ?2, checksum = ?3"
                             " WHERE lower(hex(key_id)) = ?1",
                             -1, &stmt, nullptr) == SQLITE_OK);
  sqlite3_bind_text(stmt, 1, key_id_hex.c_str(), -1, SQLITE_TRANSIENT);
  sqlite3_bind_int64(stmt, 2, static_cast<sqlite3_int64>(image.size()));
  sqlite3_bind_blob(stmt, 3, checksum.bytes.data(), static_cast<int>(checksum.bytes.size()), SQLITE_TRANSIENT);
  CHECK(sqlite3_step(stmt) == SQLITE_DONE);
  CHECK(sqlite3_changes(db) == 1);
  sqlite3_finalize(stmt);
  sqlite3_close(db);
}

}  // namespace jitcache::testing
