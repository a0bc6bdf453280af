// Store::lookup_explained: a miss says why (no entry, only a quarantined one, or a corrupt image that
// was deleted), which the metrics endpoint reports as jitcache_lookup_misses_total{reason}.
#include <catch2/catch.hpp>

#include <string>

#include "store_dir.hpp"
#include "store_fixtures.hpp"
#include <daemon/store/sqlite_store.hpp>

namespace {

using namespace jitcache;
using namespace jitcache::testing;
using daemon::store::MissReason;

struct Explained {
  bool found = false;
  MissReason why = MissReason::not_found;
};

Explained explain(daemon::store::Store& store, const proto::Digest256& key_id, Visibility who = {}) {
  Explained out;
  out.why = static_cast<MissReason>(99);  // so that a miss that forgot to say why is caught
  auto found = store.lookup_explained(key_id, who, out.why);
  INFO((found ? std::string() : found.error().message));
  REQUIRE(found.ok());
  out.found = found->has_value();
  return out;
}

}  // namespace

TEST_CASE("miss reason: no entry of the key is not_found, and a hit leaves the reason alone") {
  StoreDir dir;
  auto store = open_store(dir);
  const auto missing = explain(*store, proto::key_id(make_key(1)));
  CHECK_FALSE(missing.found);
  CHECK(missing.why == MissReason::not_found);

  const auto key_id = put_ok(*store, make_put(make_key(2), make_image(2, 4096)));
  const auto hit = explain(*store, key_id);
  CHECK(hit.found);
  CHECK(hit.why == static_cast<MissReason>(99));
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
