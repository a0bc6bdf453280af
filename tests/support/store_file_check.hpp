// A look at a store's database file from outside the daemon, for fault tests: PRAGMA quick_check,
// and every entry's image hashed against its entries.checksum, read through a connection of the
// test's own (read-only, so it works beside a running daemon: WAL readers never block the writer).
// Header-only because it needs SQLite and zstd, which the support library does not link (tests that
// include it link the daemon's core, which brings both). Thread safety: a
// free function; each call opens and closes its own connection.
#pragma once

#include <sqlite3.h>
#include <zstd.h>

#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include <proto/digest.hpp>

namespace jitcache::testing {

struct StoreFileCheck {
  std::string open_error;   // empty when the file opened
  std::string quick_check;  // "ok", or what quick_check reported (its rows joined by "; ")
  std::uint64_t entries = 0;
  std::uint64_t images_hashed = 0;       // raw, or zstd decoded here: hashed and compared with entries.checksum
  std::uint64_t images_other_codec = 0;  // a codec this check cannot decode (left to LOOKUP)
  std::vector<std::string> bad;          // "<key id hex>: why", one per entry that fails
  std::map<std::string, std::uint64_t> raw_size_by_key;  // key id hex (namespace 0 only) → raw_size

  bool ok() const { return open_error.empty() && quick_check == "ok" && bad.empty(); }
};

inline StoreFileCheck check_store_file(const std::string& path) {
  StoreFileCheck out;
  sqlite3* db = nullptr;
  const std::string uri = "file:" + path + "?mode=ro";
  if (int rc = sqlite3_open_v2(uri.c_str(), &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, nullptr); rc != SQLITE_OK) {
    out.open_error = db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
    sqlite3_close(db);
    return out;
  }
  sqlite3_busy_timeout(db, 5000);
  auto fail = [&](const char* what) {
    out.open_error = std::string(what) + ": " + sqlite3_errmsg(db);
    sqlite3_close(db);
    return out;
  };

  sqlite3_stmt* stmt = nullptr;
  if (sqlite3_prepare_v2(db, "PRAGMA quick_check", -1, &stmt, nullptr) != SQLITE_OK) return fail("quick_check");
  int rc = SQLITE_OK;
  while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
    if (!out.quick_check.empty()) out.quick_check += "; ";
    out.quick_check += reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0));
  }
  if (rc != SQLITE_DONE) out.quick_check += std::string(" (step failed: ") + sqlite3_errmsg(db) + ")";
  sqlite3_finalize(stmt);

  // One read transaction: the rows and the images come from one snapshot.
  const char* sql =
      "SELECT e.key_id, e.namespace, e.codec, e.raw_size, e.stored_size, e.checksum, b.data "
      "FROM entries AS e LEFT JOIN blobs AS b ON b.entry_id = e.id";
  if (sqlite3_prepare_v2(db, sql, -1, &stmt, nullptr) != SQLITE_OK) return fail("scanning entries");
  while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
    ++out.entries;
    const auto* key = static_cast<const std::uint8_t*>(sqlite3_column_blob(stmt, 0));
    const std::string key_hex =
        proto::to_hex(proto::Bytes(key, static_cast<std::size_t>(sqlite3_column_bytes(stmt, 0))));
    const auto namespace_id = sqlite3_column_int64(stmt, 1);
    const auto codec = sqlite3_column_int64(stmt, 2);
    const auto raw_size = sqlite3_column_int64(stmt, 3);
    const auto stored_size = sqlite3_column_int64(stmt, 4);
    const auto* checksum = static_cast<const std::uint8_t*>(sqlite3_column_blob(stmt, 5));
    const int checksum_size = sqlite3_column_bytes(stmt, 5);
    if (namespace_id == 0) out.raw_size_by_key[key_hex] = static_cast<std::uint64_t>(raw_size);
    if (sqlite3_column_type(stmt, 6) == SQLITE_NULL) {
      out.bad.push_back(key_hex + ": no image");
      continue;
    }
    const auto* data = static_cast<const std::uint8_t*>(sqlite3_column_blob(stmt, 6));
    const auto data_size = sqlite3_column_bytes(stmt, 6);
    if (data_size != stored_size) {
      out.bad.push_back(key_hex + ": image of " + std::to_string(data_size) + " bytes, stored_size " +
                        std::to_string(stored_size));
      continue;
    }
    if (codec != 0 && codec != 1) {
      ++out.images_other_codec;
      continue;
    }
    ++out.images_hashed;
    // Decoded with libzstd directly, not the daemon's codec, so the check does not trust the code
    // it checks.
    std::vector<std::uint8_t> decoded;
    proto::Bytes raw(data, static_cast<std::size_t>(data_size));
    if (codec == 1) {
      decoded.resize(static_cast<std::size_t>(raw_size));
      const std::size_t n = ZSTD_decompress(decoded.data(), decoded.size(), data, static_cast<std::size_t>(data_size));
      if (ZSTD_isError(n) || n != decoded.size()) {
        out.bad.push_back(key_hex + ": zstd image does not decode to raw_size bytes");
        continue;
      }
      raw = proto::Bytes(decoded);
    }
    const auto sum = proto::xxh3_128(raw);
    if (static_cast<std::int64_t>(raw.size()) != raw_size || checksum_size != 16 ||
        std::memcmp(sum.bytes.data(), checksum, 16) != 0) {
      out.bad.push_back(key_hex + ": image does not match its checksum");
    }
  }
  if (rc != SQLITE_DONE) out.bad.push_back(std::string("scan stopped: ") + sqlite3_errmsg(db));
  sqlite3_finalize(stmt);
  sqlite3_close(db);
  return out;
}

}  // namespace jitcache::testing
