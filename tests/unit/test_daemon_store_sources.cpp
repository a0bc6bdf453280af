// The sources the store keeps for the daemon's own compiles (daemon/store/sources.hpp, schema 0009)
// on a real SQLite file: one per content digest, within source_budget (the coldest entries' first,
// those of no entry before any), gone with the last entry compiled from them, and the hot set the
// re-JIT compiles, ranked by (hits + 1) × compile time.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include <daemon/store/sources.hpp>
#include <proto/content_digest.hpp>
#include <proto/jit_options.hpp>
#include <tests/support/sqlite_text_query.hpp>
#include <tests/support/store_fixtures.hpp>

using namespace jitcache;
using namespace jitcache::testing;
using daemon::store::HotSetQuery;

namespace {

// A source of `size` bytes that zstd cannot shrink (so it is kept raw and takes exactly `size`).
std::vector<std::uint8_t> incompressible_source(std::uint64_t seed, std::size_t size) {
  return make_image(seed + 1000, size);
}

proto::KeyFields key_of_source(const std::vector<std::uint8_t>& source, std::string arch = "sm_90",
                               std::uint32_t driver_api = 13000, std::string driver_build = "580.1") {
  proto::KeyFields key;
  key.content = proto::content_digest(proto::Bytes(source));
  key.arch = std::move(arch);
  key.driver_api = driver_api;
  key.driver_build = std::move(driver_build);
  key.options = proto::default_option_text();
  return key;
}

// A COMPILE's PUT as the daemon's sink makes it: shared, with the PTX and the worker's options.
PutInput compiled_put(const proto::KeyFields& key, const std::vector<std::uint8_t>& source,
                      std::uint64_t compile_time_us = 4'800'000) {
  static const std::vector<std::uint8_t> image = make_image(7, 600);
  PutInput input = make_put(key, image);
  input.content_fast = proto::xxh3_128(proto::Bytes(source));
  input.source = proto::Bytes(source);
  input.worker_options = "-O3";
  input.compile_time_us = compile_time_us;
  return input;
}

std::unique_ptr<SqliteStore> open_with_budget(const StoreDir& dir, std::uint64_t budget, const FakeClock& clock = {}) {
  SqliteStoreOptions options;
  options.path = dir.db();
  options.reader_count = 2;
  options.clock = clock.function();
  options.source_budget_bytes = budget;
  return open_store(options);
}

daemon::store::Totals totals(SqliteStore& store) {
  auto totals = store.totals();
  REQUIRE(totals);
  return *totals;
}

bool source_kept(SqliteStore& store, const std::vector<std::uint8_t>& source) {
  auto kept = store.sources().kept_source(proto::content_digest(proto::Bytes(source)));
  REQUIRE(kept);
  if (!*kept) return false;
  CHECK(**kept == source);
  return true;
}

std::vector<std::string> hot_archs(SqliteStore& store, HotSetQuery query) {
  auto hot = store.sources().hot_set(query);
  INFO((hot ? std::string() : hot.error().message));
  REQUIRE(hot);
  std::vector<std::string> archs;
  for (const auto& entry : *hot) archs.push_back(entry.key.arch);
  return archs;
}

}  // namespace

TEST_CASE("sources: one source is kept per content digest, compressed, however many entries were compiled from it") {
  StoreDir dir{"jitcache-sources-test"};
  auto store = open_with_budget(dir, 1 << 20);
  // PTX-like text compresses; the same source for two archs and two drivers is one row.
  std::string text;
  for (int i = 0; i < 200; ++i) text += "  add.s32 %r" + std::to_string(i % 7) + ", %r1, %r2;\n";
  const std::vector<std::uint8_t> ptx(text.begin(), text.end());
  put_ok(*store, compiled_put(key_of_source(ptx, "sm_90"), ptx));
  put_ok(*store, compiled_put(key_of_source(ptx, "sm_80"), ptx));
  put_ok(*store, compiled_put(key_of_source(ptx, "sm_90", 13010, "590.2"), ptx));

  const auto figures = totals(*store);
  CHECK(figures.entries == 3);
  CHECK(figures.sources == 1);
  CHECK(figures.source_bytes > 0);
  CHECK(figures.source_bytes < ptx.size() / 4);
  CHECK(query_text(dir.db().string(), "SELECT COUNT(*) FROM entry_sources") == "3");
  CHECK(query_text(dir.db().string(), "SELECT DISTINCT worker_options FROM entry_sources") == "-O3");
  CHECK(query_text(dir.db().string(), "SELECT codec FROM sources") == "1");
  CHECK(source_kept(*store, ptx));

  // A client's own PUT (no source, or not shared) keeps nothing.
  const auto other = incompressible_source(2, 500);
  PutInput uploaded = compiled_put(key_of_source(other), other);
  uploaded.namespace_id = 1000;
  put_ok(*store, uploaded);
  PutInput no_source = compiled_put(key_of_source(other, "sm_80"), other);
  no_source.source = {};
  put_ok(*store, no_source);
  CHECK(totals(*store).sources == 1);
  CHECK_FALSE(source_kept(*store, other));
}

TEST_CASE("sources: a source goes with the last entry compiled from it") {
  StoreDir dir{"jitcache-sources-test"};
  auto store = open_with_budget(dir, 1 << 20);
  const auto ptx = incompressible_source(1, 3000);
  const auto first = put_ok(*store, compiled_put(key_of_source(ptx, "sm_90"), ptx));
  const auto second = put_ok(*store, compiled_put(key_of_source(ptx, "sm_80"), ptx));
  const Visibility trusted{0, true};

  auto removed = store->remove(proto::to_hex(first), trusted);
  REQUIRE(removed);
  CHECK(*removed == 1);
  CHECK(totals(*store).sources == 1);
  CHECK(source_kept(*store, ptx));

  removed = store->remove(proto::to_hex(second), trusted);
  REQUIRE(removed);
  CHECK(*removed == 1);
  const auto figures = totals(*store);
  CHECK(figures.sources == 0);
  CHECK(figures.source_bytes == 0);
  CHECK_FALSE(source_kept(*store, ptx));
  CHECK(query_text(dir.db().string(), "SELECT COUNT(*) FROM sources") == "0");
}

TEST_CASE("sources: over source_budget, sources of no entry go first, then those of the coldest entries") {
  StoreDir dir{"jitcache-sources-test"};
  FakeClock clock;
  // Three 4000-byte sources do not fit in 10 000 bytes; two do.
  auto store = open_with_budget(dir, 10'000, clock);
  const auto a = incompressible_source(1, 4000);
  const auto b = incompressible_source(2, 4000);
  const auto c = incompressible_source(3, 4000);
  const auto a_key = put_ok(*store, compiled_put(key_of_source(a), a));
  clock.advance(1000);
  put_ok(*store, compiled_put(key_of_source(b), b));
  clock.advance(1000);
  // A is used after B was stored: B's entry is now the coldest, although A is older.
  REQUIRE(lookup_ok(*store, a_key));
  clock.advance(1000);
  {
    // A source no entry uses (as a crash between two writes could leave), newer than all.
    ExternalDb external(dir.db());
    external.exec(
        "INSERT INTO sources (content_digest, codec, raw_size, stored_size, kept_at_ms, data)"
        " VALUES (randomblob(32), 0, 10, 10, 9999999999999, randomblob(10))");
  }
  CHECK(totals(*store).sources == 3);

  put_ok(*store, compiled_put(key_of_source(c), c));
  const auto figures = totals(*store);
  CHECK(figures.sources == 2);
  CHECK(figures.source_bytes == 8000);
  CHECK(figures.sources_dropped == 2);
  CHECK(source_kept(*store, a));
  CHECK_FALSE(source_kept(*store, b));
  CHECK(source_kept(*store, c));
  // The entries stay: only their sources went.
  CHECK(figures.entries == 3);
  CHECK(query_text(dir.db().string(), "SELECT COUNT(*) FROM entry_sources") == "2");

  // A source alone over the budget is not kept at all.
  const auto huge = incompressible_source(4, 12'000);
  put_ok(*store, compiled_put(key_of_source(huge), huge));
  CHECK(totals(*store).sources_dropped == 3);
  CHECK(totals(*store).sources == 2);
  CHECK_FALSE(source_kept(*store, huge));
}

TEST_CASE("sources: the hot set is one driver's live shared entries with a kept source, by (hits + 1) x compile time") {
  StoreDir dir{"jitcache-sources-test"};
  auto store = open_with_budget(dir, 1 << 20);
  const auto ptx = incompressible_source(1, 1000);
  // Scores: sm_80 (0 + 1) × 1000 = 1000; sm_86 (19 + 1) × 100 = 2000; sm_90 (0 + 1) × 3000 = 3000.
  put_ok(*store, compiled_put(key_of_source(ptx, "sm_80"), ptx, 1000));
  const auto hot_key = put_ok(*store, compiled_put(key_of_source(ptx, "sm_86"), ptx, 100));
  for (int i = 0; i < 19; ++i) REQUIRE(lookup_ok(*store, hot_key));
  put_ok(*store, compiled_put(key_of_source(ptx, "sm_90"), ptx, 3000));
  // Not in the hot set: another driver's, one without a kept source, a quarantined one.
  put_ok(*store, compiled_put(key_of_source(ptx, "sm_90", 12080, "570.1"), ptx, 9'000'000));
  PutInput no_source = compiled_put(key_of_source(ptx, "sm_75"), ptx, 9'000'000);
  no_source.source = {};
  put_ok(*store, no_source);
  const auto failing = put_ok(*store, compiled_put(key_of_source(ptx, "sm_89"), ptx, 9'000'000));
  auto reported = store->report_failure(failing, Visibility{0, true},
                                        daemon::store::FailureReport{209, proto::FailureStage::image, "", 0});
  REQUIRE(reported);

  HotSetQuery query{13000, "580.1", "", 10};
  CHECK(hot_archs(*store, query) == std::vector<std::string>{"sm_90", "sm_86", "sm_80"});
  query.limit = 2;
  CHECK(hot_archs(*store, query) == std::vector<std::string>{"sm_90", "sm_86"});
  query = HotSetQuery{13000, "580.1", "sm_86", 10};
  CHECK(hot_archs(*store, query) == std::vector<std::string>{"sm_86"});
  auto hot = store->sources().hot_set(HotSetQuery{13000, "580.1", "sm_86", 10});
  REQUIRE(hot);
  REQUIRE(hot->size() == 1);
  CHECK(hot->front().hits == 19);
  CHECK(hot->front().compile_time_us == 100);
  CHECK(hot->front().content_fast == proto::xxh3_128(proto::Bytes(ptx)));

  // What the re-JIT asks besides: the drivers, most recently asked first, and entries by driver and arch.
  auto drivers = store->sources().known_drivers();
  REQUIRE(drivers);
  CHECK(drivers->size() == 2);
  auto has = store->sources().has_entries_of(13000, "580.1", "sm_86");
  REQUIRE(has);
  CHECK(*has);
  has = store->sources().has_entries_of(13000, "580.1", "sm_100");
  REQUIRE(has);
  CHECK_FALSE(*has);
  auto shared = store->sources().has_shared_entry(hot_key);
  REQUIRE(shared);
  CHECK(*shared);
}
