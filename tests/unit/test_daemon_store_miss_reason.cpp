// Store::lookup: a miss says why (no entry, only a quarantined one, or a corrupt image that was
// deleted), by key id and by fast key id alike, which the metrics endpoint reports as
// jitcache_lookup_misses_total{reason}.
#include <catch2/catch.hpp>

#include <string>
#include <variant>

#include <daemon/store/sqlite_store.hpp>
#include <tests/support/store_dir.hpp>
#include <tests/support/store_fixtures.hpp>

namespace {

using namespace jitcache;
using namespace jitcache::testing;

struct Explained {
  bool found = false;
  MissReason why = MissReason::not_found;
};

Explained explain(daemon::store::Store& store, const Selector& selector, Visibility who = {}) {
  auto found = store.lookup(selector, who);
  INFO((found ? std::string() : found.error().message));
  REQUIRE(found.ok());
  if (const auto* miss = std::get_if<Miss>(&*found)) return Explained{false, miss->reason};
  return Explained{true, MissReason::not_found};
}

Explained explain(daemon::store::Store& store, const proto::Digest256& key_id, Visibility who = {}) {
  return explain(store, Selector::key_id(key_id), who);
}

Selector by_fast_key(const proto::KeyFields& key) {
  return Selector::fast_key(proto::fast_key_of(key, content_fast_of(key)));
}

}  // namespace

TEST_CASE("miss reason: no entry of the key is not_found, and a hit is a hit") {
  StoreDir dir;
  auto store = open_store(dir);
  const auto missing = explain(*store, proto::key_id(make_key(1)));
  CHECK_FALSE(missing.found);
  CHECK(missing.why == MissReason::not_found);

  const auto key_id = put_ok(*store, make_put(make_key(2), make_image(2, 4096)));
  CHECK(explain(*store, key_id).found);
}

TEST_CASE("miss reason: a key whose only visible entry is quarantined misses as quarantined") {
  StoreDir dir;
  auto store = open_store(dir);
  const auto key_id = put_ok(*store, make_put(make_key(3), make_image(3, 4096)));
  daemon::store::FailureReport report;
  report.cu_result = 209;
  auto reported = store->report_failure(key_id, Visibility{0, true}, report);
  REQUIRE(reported.ok());
  REQUIRE(reported->has_value());
  const auto missed = explain(*store, key_id);
  CHECK_FALSE(missed.found);
  CHECK(missed.why == MissReason::quarantined);

  // Another uid's quarantined entry is not visible to a caller: for it the key is simply not found.
  const auto own = put_ok(*store, make_put(make_key(4), make_image(4, 4096), 2000));
  REQUIRE(store->report_failure(own, Visibility{2000, false}, report).ok());
  CHECK(explain(*store, own, Visibility{1000, false}).why == MissReason::not_found);
  CHECK(explain(*store, own, Visibility{2000, false}).why == MissReason::quarantined);
}

TEST_CASE("miss reason: a shared entry hidden from its reporter misses as quarantined for it only") {
  StoreDir dir;
  auto store = open_store(dir);
  const auto key_id = put_ok(*store, make_put(make_key(6), make_image(6, 4096)));
  daemon::store::FailureReport report;
  report.cu_result = 209;
  report.reporter_uid = 1000;
  auto reported = store->report_failure(key_id, Visibility{1000, false}, report);
  REQUIRE(reported.ok());
  REQUIRE((*reported)->verdict == daemon::store::ReportVerdict::hidden_from_reporter);
  CHECK(explain(*store, key_id, Visibility{1000, false}).why == MissReason::quarantined);
  CHECK(explain(*store, key_id, Visibility{2000, false}).found);
}

TEST_CASE("miss reason: an image that fails its checksum misses as corrupt, then as not_found") {
  StoreDir dir;
  auto store = open_store(dir);
  const auto key_id = put_ok(*store, make_put(make_key(5), make_image(5, 10'000)));
  ExternalDb(dir.db()).exec("UPDATE blobs SET data = substr(data, 1, 100)");
  const auto first = explain(*store, key_id);
  CHECK_FALSE(first.found);
  CHECK(first.why == MissReason::corrupt);
  CHECK(explain(*store, key_id).why == MissReason::not_found);  // deleted by the first
}

TEST_CASE("miss reason: by fast key a miss says why as by key: not_found, quarantined, corrupt") {
  StoreDir dir;
  auto store = open_store(dir);
  CHECK(explain(*store, by_fast_key(make_key(7))).why == MissReason::not_found);

  const auto quarantined = put_ok(*store, make_put(make_key(8), make_image(8, 4096)));
  daemon::store::FailureReport report;
  report.cu_result = 209;
  REQUIRE(store->report_failure(quarantined, Visibility{0, true}, report).ok());
  const auto missed = explain(*store, by_fast_key(make_key(8)));
  CHECK_FALSE(missed.found);
  CHECK(missed.why == MissReason::quarantined);

  const auto hidden = put_ok(*store, make_put(make_key(9), make_image(9, 4096)));
  report.reporter_uid = 1000;
  REQUIRE(store->report_failure(hidden, Visibility{1000, false}, report).ok());
  CHECK(explain(*store, by_fast_key(make_key(9)), Visibility{1000, false}).why == MissReason::quarantined);
  CHECK(explain(*store, by_fast_key(make_key(9)), Visibility{2000, false}).found);

  put_ok(*store, make_put(make_key(10), make_image(10, 10'000)));
  ExternalDb(dir.db()).exec(
      "UPDATE blobs SET data = substr(data, 1, 100) WHERE entry_id = (SELECT MAX(id) FROM entries)");
  CHECK(explain(*store, by_fast_key(make_key(10))).why == MissReason::corrupt);
  CHECK(explain(*store, by_fast_key(make_key(10))).why == MissReason::not_found);
}

TEST_CASE("miss reason: a key-id prefix that matches nothing misses as not_found") {
  StoreDir dir;
  auto store = open_store(dir);
  put_ok(*store, make_put(make_key(11), make_image(11, 4096)));
  std::string prefix = proto::to_hex(proto::key_id(make_key(11))).substr(0, 12);
  prefix[0] = prefix[0] == '0' ? '1' : '0';
  const auto missed = explain(*store, Selector::key_id_prefix(prefix));
  CHECK_FALSE(missed.found);
  CHECK(missed.why == MissReason::not_found);
}
