// VERIFY's store side (daemon/store/verify.hpp and SqliteStore's integrity_check/verify_entries):
// every image checked page by page, exactly the damaged entries removed and reported.
#include <catch2/catch.hpp>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include <daemon/store/verify.hpp>
#include <tests/support/store_dir.hpp>
#include <tests/support/store_fixtures.hpp>

namespace {

using namespace jitcache;
using namespace jitcache::testing;
using daemon::store::run_verify;

std::vector<std::uint8_t> compressible(std::uint64_t seed, std::size_t size) {
  std::vector<std::uint8_t> image(size, static_cast<std::uint8_t>(seed));
  for (std::size_t i = 0; i < size; i += 64) image[i] = static_cast<std::uint8_t>(i / 64);
  return image;
}

std::unique_ptr<SqliteStore> open_for_verify(const StoreDir& dir) {
  SqliteStoreOptions options;
  options.path = dir.db();
  options.compression_level = 3;
  return open_store(options);
}

std::string row_of(const proto::Digest256& key_id) {
  return "(SELECT id FROM entries WHERE hex(key_id) = upper('" + proto::to_hex(key_id) + "'))";
}

}  // namespace

TEST_CASE("verify: a healthy store is reported ok with every entry checked across several pages") {
  StoreDir dir;
  auto store = open_for_verify(dir);
  const int count = static_cast<int>(daemon::store::k_verify_page_entries) * 2 + 5;
  for (int i = 0; i < count; ++i) {
    // Every other image compresses: raw and zstd entries side by side.
    put_ok(*store, make_put(make_key(i), i % 2 ? compressible(i, 4000) : make_image(i, 4000)));
  }
  auto report = run_verify(*store, 100);
  INFO((report ? std::string() : report.error().message));
  REQUIRE(report.ok());
  CHECK(report->integrity == "ok");
  CHECK(report->entries_checked == static_cast<std::uint64_t>(count));
  CHECK(report->entries_removed == 0);
  CHECK(report->removed.empty());
  CHECK(store->totals()->entries == static_cast<std::uint64_t>(count));
}

TEST_CASE("verify: exactly the damaged entries are removed, counted and reported with their key ids") {
  StoreDir dir;
  auto store = open_for_verify(dir);
  std::vector<proto::Digest256> keys;
  for (int i = 0; i < 80; ++i) {
    keys.push_back(put_ok(*store, make_put(make_key(i), i % 2 ? compressible(i, 8000) : make_image(i, 8000))));
  }
  {
    ExternalDb external(dir.db());
    // A raw image with a flipped byte, a zstd frame with garbage inside, a missing image, and a
    // zstd entry whose raw_size lies: four kinds of damage in different pages.
    external.exec(
        "UPDATE blobs SET data = CAST(substr(data, 1, 10) || CASE WHEN substr(data, 11, 1) = x'00' THEN x'01'"
        " ELSE x'00' END || substr(data, 12) AS BLOB) WHERE entry_id = " +
        row_of(keys[4]));
    external.exec(
        "UPDATE blobs SET data = CAST(substr(data, 1, 20) || x'FFFFFFFFFFFFFFFF' || substr(data, 29) AS BLOB)"
        " WHERE entry_id = " +
        row_of(keys[41]));
    external.exec("DELETE FROM blobs WHERE entry_id = " + row_of(keys[50]));
    external.exec("UPDATE entries SET raw_size = raw_size + 1 WHERE id = " + row_of(keys[77]));
  }
  const std::set<std::string> damaged{proto::to_hex(keys[4]), proto::to_hex(keys[41]), proto::to_hex(keys[50]),
                                      proto::to_hex(keys[77])};

  auto report = run_verify(*store, 100);
  REQUIRE(report.ok());
  CHECK(report->integrity == "ok");
  CHECK(report->entries_checked == 80);
  CHECK(report->entries_removed == 4);
  std::set<std::string> reported;
  for (const auto& removed : report->removed) {
    reported.insert(proto::to_hex(removed.key_id));
    CHECK(removed.namespace_id == 0);
  }
  CHECK(reported == damaged);

  auto totals = store->totals();
  REQUIRE(totals.ok());
  CHECK(totals->entries == 76);
  CHECK(totals->corrupt_entries == 4);
  for (std::size_t i = 0; i < keys.size(); ++i) {
    const bool gone = damaged.contains(proto::to_hex(keys[i]));
    CHECK(lookup_ok(*store, keys[i]).has_value() == !gone);
  }
  // A second run finds nothing more.
  auto again = run_verify(*store, 100);
  REQUIRE(again.ok());
  CHECK(again->entries_checked == 76);
  CHECK(again->entries_removed == 0);
}

TEST_CASE("verify: the list of removed entries is bounded, their count is not") {
  StoreDir dir;
  auto store = open_for_verify(dir);
  std::vector<proto::Digest256> keys;
  for (int i = 0; i < 6; ++i) keys.push_back(put_ok(*store, make_put(make_key(i), make_image(i, 1000))));
  ExternalDb external(dir.db());
  for (int i = 0; i < 3; ++i)
    external.exec("DELETE FROM blobs WHERE entry_id = " + row_of(keys[static_cast<std::size_t>(i)]));
  auto report = run_verify(*store, 2);
  REQUIRE(report.ok());
  CHECK(report->entries_removed == 3);
  CHECK(report->removed.size() == 2);
}
