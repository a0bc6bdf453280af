// RequestHandler's REPORT_FAILURE (op 9), and LOOKUP with the STATS of the hot image cache, against
// a real SqliteStore, with peers of any uid: the server cannot be connected to as another user in a
// test, but the handler takes the peer's credentials as a value, so trust and visibility can be
// checked here for uids other than ours. What it answers when the store fails is checked through a
// StoreFaultInjector under the real one.
#include <catch2/catch.hpp>

#include <sqlite3.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <string>

#include <proto/explain_messages.hpp>
#include <proto/messages.hpp>
#include <proto/remote_check_messages.hpp>

#include <daemon/ops/request_handler.hpp>
#include <daemon/remote/remote_tier.hpp>
#include <daemon/stats/counters.hpp>
#include <daemon/store/sqlite_store.hpp>
#include <tests/support/memory_backend.hpp>
#include <tests/support/sample_cubin.hpp>
#include <tests/support/sample_entries.hpp>
#include <tests/support/store_dir.hpp>
#include <tests/support/store_fault_injector.hpp>

namespace {

using namespace jitcache;
using daemon::ops::Reply;
using daemon::ops::RequestHandler;
using daemon::policy::PeerCredentials;
using proto::Op;
using proto::Status;

// A uid that is neither root nor ours, so the handler treats it as untrusted.
uid_t untrusted_uid() { return ::geteuid() == 0 ? 50001 : ::geteuid() + 1; }

struct Fixture {
  // `faults`: under the store (testing::StoreFaultInjector), or none.
  explicit Fixture(daemon::ops::TenantPolicy tenants = {}, daemon::store::StoreFaults* store_faults = nullptr)
      : faults(store_faults), handler{*store,  counters, proto::k_default_max_frame_bytes,
                                      nullptr, nullptr,  std::move(tenants)} {}

  daemon::store::StoreFaults* faults = nullptr;
  testing::StoreDir dir{"jitcache-handler-test"};
  std::unique_ptr<daemon::store::SqliteStore> store = open();
  daemon::stats::Counters counters;
  RequestHandler handler;
  const PeerCredentials trusted{::geteuid(), ::getegid(), 100};
  const PeerCredentials untrusted{untrusted_uid(), 100, 4242};

  std::unique_ptr<daemon::store::SqliteStore> open() {
    daemon::store::SqliteStoreOptions options;
    options.path = dir.db();
    options.reader_count = 1;
    options.faults = faults;
    auto opened = daemon::store::SqliteStore::open(options);
    REQUIRE(opened.ok());
    return std::move(*opened);
  }

  Reply call(Op op, const proto::Payload& payload, const PeerCredentials& peer) {
    return handler.handle(op, proto::Bytes(payload), peer);
  }

  std::uint64_t stat(const std::string& name) {
    Reply reply = call(Op::stats, {}, trusted);
    REQUIRE(reply.status == Status::ok);
    auto stats = proto::decode_stats_reply(proto::Bytes(reply.payload));
    REQUIRE(stats.ok());
    for (const auto& [n, v] : stats->values) {
      if (n == name) return v;
    }
    FAIL("no stat named " << name);
    return 0;
  }

  std::string column(const std::string& sql) {
    sqlite3* db = nullptr;
    REQUIRE(sqlite3_open(dir.db().c_str(), &db) == SQLITE_OK);
    sqlite3_stmt* stmt = nullptr;
    REQUIRE(sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr) == SQLITE_OK);
    std::string out;
    if (sqlite3_step(stmt) == SQLITE_ROW && sqlite3_column_text(stmt, 0)) {
      out = reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0));
    }
    sqlite3_finalize(stmt);
    sqlite3_close(db);
    return out;
  }
};

proto::ReportFailureRequest report_for(std::uint64_t seed) {
  proto::ReportFailureRequest request;
  request.key = testing::sample_key(seed);
  request.cu_result = 200;  // CUDA_ERROR_INVALID_IMAGE
  request.stage = proto::FailureStage::load;
  request.detail = "error   : Invalid ELF";
  return request;
}

std::string message_of(const Reply& reply) {
  auto message = proto::decode_error_message(proto::Bytes(reply.payload));
  return message ? *message : "(unreadable)";
}

}  // namespace

TEST_CASE("request handler: REPORT_FAILURE runs on the writer lane and HELLO announces it") {
  CHECK(daemon::ops::lane_for(Op::report_failure) == daemon::ops::Lane::writer);
  CHECK(daemon::ops::lane_for(Op::lookup) == daemon::ops::Lane::worker);

  Fixture f;
  Reply hello = f.call(Op::hello, proto::encode(proto::HelloRequest{1, 1, "test"}), f.untrusted);
  REQUIRE(hello.status == Status::ok);
  auto decoded = proto::decode_hello_reply(proto::Bytes(hello.payload));
  REQUIRE(decoded.ok());
  CHECK((decoded->capabilities & proto::k_capability_report_failure) != 0);
  CHECK((decoded->capabilities & proto::k_capability_store) != 0);
}

TEST_CASE("request handler: an untrusted uid's report hides a shared entry from it only, and its uid is recorded") {
  Fixture f;
  const auto image = testing::sample_image(1, 1000);
  REQUIRE(f.call(Op::put, proto::encode(testing::sample_put(1, image)), f.trusted).status == Status::ok);

  Reply reply = f.call(Op::report_failure, proto::encode(report_for(1)), f.untrusted);
  REQUIRE(reply.status == Status::ok);
  auto decoded = proto::decode_report_failure_reply(proto::Bytes(reply.payload));
  REQUIRE(decoded.ok());
  CHECK(decoded->outcome == proto::ReportFailureOutcome::hidden_from_reporter);
  CHECK(decoded->namespace_id == 0);

  proto::LookupRequest lookup;
  lookup.key = testing::sample_key(1);
  CHECK(f.call(Op::lookup, proto::encode(lookup), f.untrusted).status == Status::not_found);
  CHECK(f.call(Op::lookup, proto::encode(lookup), f.trusted).status == Status::ok);
  CHECK(f.column("SELECT reporter_uid || ',' || cu_result || ',' || stage || ',' || detail FROM failure_reports") ==
        std::to_string(untrusted_uid()) + ",200,4,error   : Invalid ELF");
  CHECK(f.stat("failure_reports") == 1);
  CHECK(f.stat("reports_held") == 1);
  CHECK(f.stat("quarantines") == 0);
  CHECK(f.stat("entries_quarantined") == 0);
}

TEST_CASE("request handler: a trusted peer's report quarantines a shared entry, and its uid is recorded") {
  Fixture f;
  REQUIRE(f.call(Op::put, proto::encode(testing::sample_put(1, testing::sample_image(1, 1000))), f.trusted).status ==
          Status::ok);
  Reply reply = f.call(Op::report_failure, proto::encode(report_for(1)), f.trusted);
  REQUIRE(reply.status == Status::ok);
  CHECK(proto::decode_report_failure_reply(proto::Bytes(reply.payload))->outcome ==
        proto::ReportFailureOutcome::quarantined);
  proto::LookupRequest lookup;
  lookup.key = testing::sample_key(1);
  CHECK(f.call(Op::lookup, proto::encode(lookup), f.untrusted).status == Status::not_found);
  CHECK(f.column("SELECT quarantine_reporter_uid || ',' || quarantine_result FROM entries") ==
        std::to_string(::geteuid()) + ",200");
  CHECK(f.stat("quarantines") == 1);
  CHECK(f.stat("entries_quarantined") == 1);
}

TEST_CASE("request handler: an untrusted uid over reports_per_minute is answered busy, a trusted one never is") {
  Fixture f(daemon::ops::TenantPolicy{daemon::policy::TrustPolicy(::geteuid()), 2});
  REQUIRE(f.call(Op::put, proto::encode(testing::sample_put(1, testing::sample_image(1, 1000))), f.trusted).status ==
          Status::ok);
  CHECK(f.call(Op::report_failure, proto::encode(report_for(1)), f.untrusted).status == Status::ok);
  CHECK(f.call(Op::report_failure, proto::encode(report_for(1)), f.untrusted).status == Status::ok);
  Reply over = f.call(Op::report_failure, proto::encode(report_for(1)), f.untrusted);
  CHECK(over.status == Status::busy);
  CHECK_THAT(*proto::decode_error_message(proto::Bytes(over.payload)), Catch::Contains("reports_per_minute"));
  const PeerCredentials other{untrusted_uid() + 1, 100, 4343};
  CHECK(f.call(Op::report_failure, proto::encode(report_for(1)), other).status == Status::ok);
  for (int i = 0; i < 5; ++i)
    CHECK(f.call(Op::report_failure, proto::encode(report_for(1)), f.trusted).status == Status::ok);
  CHECK(f.stat("reports_rate_limited") == 1);
}

TEST_CASE(
    "request handler: a uid in trusted_users, or with a trusted supplementary group, writes the shared namespace") {
  const uid_t listed = untrusted_uid();
  Fixture f(daemon::ops::TenantPolicy{daemon::policy::TrustPolicy(::geteuid(), {listed}, {4444}), 0});
  auto put_as = [&](const PeerCredentials& peer, std::uint64_t seed) {
    Reply reply = f.call(Op::put, proto::encode(testing::sample_put(seed, testing::sample_image(seed, 100))), peer);
    REQUIRE(reply.status == Status::ok);
    return proto::decode_put_reply(proto::Bytes(reply.payload))->namespace_id;
  };
  CHECK(put_as(f.untrusted, 1) == 0);
  CHECK(put_as(PeerCredentials{listed + 1, 100, 1, {27, 4444}}, 2) == 0);
  CHECK(put_as(PeerCredentials{listed + 2, 100, 1, {27}}, 3) == listed + 2);
}

TEST_CASE("request handler: another uid's private entry cannot be reported: it is not found") {
  Fixture f;
  const auto image = testing::sample_image(2, 100);
  REQUIRE(f.call(Op::put, proto::encode(testing::sample_put(2, image)), f.untrusted).status == Status::ok);
  const PeerCredentials stranger{untrusted_uid() + 1, 100, 4343};

  Reply reply = f.call(Op::report_failure, proto::encode(report_for(2)), stranger);
  CHECK(reply.status == Status::not_found);
  CHECK(f.stat("failure_reports") == 1);
  CHECK(f.stat("quarantines") == 0);
  CHECK(f.stat("errors.not_found") == 1);
  CHECK(f.column("SELECT COUNT(*) FROM entries WHERE quarantined_at_ms IS NULL") == "1");
}

TEST_CASE("request handler: a REPORT_FAILURE with a bad stage or an invalid key is bad_request and not counted") {
  Fixture f;
  proto::ReportFailureRequest bad_arch = report_for(3);
  bad_arch.key.arch = "sm_9x";
  Reply arch = f.call(Op::report_failure, proto::encode(bad_arch), f.trusted);
  CHECK(arch.status == Status::bad_request);
  CHECK_THAT(message_of(arch), Catch::Contains("sm_9x"));

  proto::Payload bad_stage = proto::encode(report_for(3));
  bad_stage[bad_stage.size() - 2 - report_for(3).detail.size() - 1] = 7;  // the stage byte
  Reply stage = f.call(Op::report_failure, bad_stage, f.trusted);
  CHECK(stage.status == Status::bad_request);
  CHECK_THAT(message_of(stage), Catch::Contains("stage 7"));

  CHECK(f.stat("failure_reports") == 0);
  CHECK(f.stat("errors.bad_request") == 2);
}

TEST_CASE("request handler: a repeated LOOKUP hit is sent from the hot image cache and STATS counts it") {
  Fixture f;
  const auto image = testing::sample_image(3, 5000);
  REQUIRE(f.call(Op::put, proto::encode(testing::sample_put(3, image)), f.trusted).status == Status::ok);
  CHECK(f.stat("hot_cache_entries") == 0);

  proto::LookupRequest lookup;
  lookup.key = testing::sample_key(3);
  Reply first = f.call(Op::lookup, proto::encode(lookup), f.untrusted);
  Reply second = f.call(Op::lookup, proto::encode(lookup), f.untrusted);
  REQUIRE(first.status == Status::ok);
  REQUIRE(second.status == Status::ok);
  REQUIRE(second.image);
  CHECK(second.image == first.image);  // one buffer, sent twice
  CHECK(std::equal(second.image->begin(), second.image->end(), image.begin(), image.end()));

  CHECK(f.stat("hits") == 2);
  CHECK(f.stat("bytes_served") == 2 * image.size());
  CHECK(f.stat("hot_cache_hits") == 1);
  CHECK(f.stat("hot_cache_misses") == 1);
  CHECK(f.stat("hot_cache_entries") == 1);
  CHECK(f.stat("hot_cache_bytes") == image.size() + daemon::store::HotImageCache::k_entry_overhead_bytes);
}

TEST_CASE("request handler: a PUT with content_fast is found by LOOKUP selector 2, and a fast-key miss is a miss") {
  Fixture f;
  Reply hello = f.call(Op::hello, proto::encode(proto::HelloRequest{1, 1, "test"}), f.untrusted);
  auto decoded = proto::decode_hello_reply(proto::Bytes(hello.payload));
  REQUIRE(decoded.ok());
  CHECK((decoded->capabilities & proto::k_capability_fast_key) != 0);

  const auto image = testing::sample_image(7, 3000);
  proto::PutRequest put = testing::sample_put(7, image);
  put.content_fast = proto::xxh3_128(proto::as_bytes("source 7"));
  REQUIRE(f.call(Op::put, proto::encode(put), f.untrusted).status == Status::ok);

  proto::LookupRequest lookup;
  lookup.selector = proto::LookupSelector::fast_key;
  lookup.fast_key = proto::fast_key_of(put.key, *put.content_fast);
  Reply hit = f.call(Op::lookup, proto::encode(lookup), f.untrusted);
  REQUIRE(hit.status == Status::ok);
  REQUIRE(hit.image);
  CHECK(std::equal(hit.image->begin(), hit.image->end(), image.begin(), image.end()));
  // Another uid does not see the untrusted uid's entry by its fast key either.
  CHECK(f.call(Op::lookup, proto::encode(lookup), PeerCredentials{untrusted_uid() + 1, 100, 1}).status ==
        Status::not_found);

  // A fast-key miss is final (every entry has a fast key): no lookup by key follows it, so it is
  // counted as the miss it is, once.
  lookup.fast_key.content_fast = proto::xxh3_128(proto::as_bytes("another source"));
  CHECK(f.call(Op::lookup, proto::encode(lookup), f.untrusted).status == Status::not_found);
  CHECK(f.stat("fast_key_lookups") == 3);
  CHECK(f.stat("fast_key_hits") == 1);
  CHECK(f.stat("hits") == 1);
  CHECK(f.stat("misses") == 2);

  // A fast key with a malformed field is a bad request that names it.
  lookup.fast_key.arch = "compute_90";
  Reply bad = f.call(Op::lookup, proto::encode(lookup), f.untrusted);
  CHECK(bad.status == Status::bad_request);
  CHECK(message_of(bad).find("arch") != std::string::npos);
}

TEST_CASE("request handler: a full disk is answered no_space, other store failures stay internal") {
  CHECK(daemon::ops::status_for(common::make_error(common::ErrorCode::no_space, "disk full")) == Status::no_space);
  CHECK(daemon::ops::status_for(common::make_error(common::ErrorCode::io, "read failed")) == Status::internal);
  CHECK(daemon::ops::status_for(common::make_error(common::ErrorCode::corrupt, "bad page")) == Status::internal);
}

TEST_CASE("request handler: GC runs on the writer lane, HELLO announces it, and only trusted callers may run it") {
  CHECK(daemon::ops::lane_for(Op::gc) == daemon::ops::Lane::writer);
  testing::StoreDir dir{"jitcache-handler-gc-test"};
  auto now = std::make_shared<std::atomic<std::int64_t>>(1'700'000'000'000);
  daemon::store::SqliteStoreOptions options;
  options.path = dir.db();
  options.reader_count = 1;
  options.stale_driver_after = std::chrono::hours(24);
  options.compression_level = 0;  // stored bytes = image bytes, which the GC reply's figures are checked against
  options.clock = [now] { return now->load(); };
  auto store = daemon::store::SqliteStore::open(options);
  REQUIRE(store.ok());
  daemon::stats::Counters counters;
  RequestHandler handler{**store, counters, proto::k_default_max_frame_bytes};
  const PeerCredentials trusted{::geteuid(), ::getegid(), 100};
  const PeerCredentials untrusted{untrusted_uid(), 100, 4242};
  auto call = [&](Op op, const proto::Payload& payload, const PeerCredentials& peer) {
    return handler.handle(op, proto::Bytes(payload), peer);
  };

  Reply hello = call(Op::hello, proto::encode(proto::HelloRequest{1, 1, "test"}), untrusted);
  REQUIRE(hello.status == Status::ok);
  auto decoded = proto::decode_hello_reply(proto::Bytes(hello.payload));
  REQUIRE(decoded.ok());
  CHECK((decoded->capabilities & proto::k_capability_gc) != 0);

  const auto image = testing::sample_image(1, 1000);
  proto::KeyFields new_key = testing::sample_key(2);
  new_key.driver_build = "590.10";
  REQUIRE(call(Op::put, proto::encode(testing::sample_put(1, image)), trusted).status == Status::ok);  // 580.159.04
  proto::PutRequest new_put = testing::sample_put(2, image);
  new_put.key = new_key;
  REQUIRE(call(Op::put, proto::encode(new_put), trusted).status == Status::ok);
  now->fetch_add(2 * 24 * 3'600'000LL);
  // A LOOKUP that misses still says 590.10 is in use.
  proto::LookupRequest lookup;
  lookup.selector = proto::LookupSelector::key;
  lookup.key = testing::sample_key(3);
  lookup.key.driver_build = "590.10";
  REQUIRE(call(Op::lookup, proto::encode(lookup), untrusted).status == Status::not_found);

  proto::ListRequest stale;
  stale.stale_only = true;
  Reply listed = call(Op::list, proto::encode(stale), trusted);
  REQUIRE(listed.status == Status::ok);
  auto page = proto::decode_list_reply(proto::Bytes(listed.payload));
  REQUIRE(page.ok());
  REQUIRE(page->entries.size() == 1);
  CHECK(page->entries[0].key.driver_build == "580.159.04");

  Reply refused = call(Op::gc, {}, untrusted);
  CHECK(refused.status == Status::forbidden);
  CHECK_THAT(message_of(refused), Catch::Contains("GC"));
  Reply gc = call(Op::gc, {}, trusted);
  REQUIRE(gc.status == Status::ok);
  auto outcome = proto::decode_gc_reply(proto::Bytes(gc.payload));
  REQUIRE(outcome.ok());
  CHECK(outcome->evicted_entries == 1);
  CHECK(outcome->stale_entries == 1);
  CHECK(outcome->evicted_bytes == image.size());
  CHECK(outcome->entries == 1);
  CHECK(call(Op::gc, proto::Payload{1}, trusted).status == Status::bad_request);
}

TEST_CASE("request handler: HIT_NOTE counts a hit of the live shared entry as a LOOKUP would, and is ok for one gone") {
  Fixture f;
  const std::vector<std::uint8_t> image = testing::sample_image(31, 500);
  proto::PutRequest put = testing::sample_put(31, image);
  put.content_fast = proto::xxh3_128(proto::as_bytes("source 31"));
  REQUIRE(f.call(Op::put, proto::encode(put), f.trusted).status == Status::ok);
  const proto::HitNoteRequest note{proto::fast_key_of(put.key, *put.content_fast)};

  Reply reply = f.call(Op::hit_note, proto::encode(note), f.untrusted);
  CHECK(reply.status == Status::ok);
  CHECK(reply.payload.empty());
  CHECK(f.stat("hits") == 1);
  CHECK(f.stat("published_hits") == 1);
  CHECK(f.stat("fast_key_hits") == 0);
  CHECK(f.stat("compile_microseconds_saved") == 1234);
  REQUIRE(f.store->flush_usage());
  CHECK(f.column("SELECT hits FROM entries") == "1");

  // A fast key with no live shared entry: ok, nothing counted.
  proto::HitNoteRequest unknown = note;
  unknown.fast_key.content_fast.bytes[0] ^= 1;
  CHECK(f.call(Op::hit_note, proto::encode(unknown), f.trusted).status == Status::ok);
  CHECK(f.stat("published_hits") == 1);

  // A malformed note is a bad request, as for any op.
  proto::Payload garbage = proto::encode(note);
  garbage.push_back(0);
  CHECK(f.call(Op::hit_note, garbage, f.trusted).status == Status::bad_request);
}

TEST_CASE("request handler: HELLO announces HIT_NOTE (capability bit 8) and leaves bit 4 clear") {
  Fixture f;
  Reply reply = f.call(Op::hello, proto::encode(proto::HelloRequest{1, 1, "test"}), f.trusted);
  REQUIRE(reply.status == Status::ok);
  auto hello = proto::decode_hello_reply(proto::Bytes(reply.payload));
  REQUIRE(hello);
  CHECK((hello->capabilities & proto::k_capability_hit_note) != 0);
  CHECK(proto::k_capability_hit_note == (1ull << 8));
  CHECK((hello->capabilities & (1ull << 4)) == 0);
}

TEST_CASE(
    "request handler: VERIFY runs on the maintenance lane, HELLO announces bit 7, and only trusted callers may run it") {
  CHECK(daemon::ops::lane_for(Op::verify) == daemon::ops::Lane::maintenance);
  Fixture f;
  Reply hello = f.call(Op::hello, proto::encode(proto::HelloRequest{1, 1, "test"}), f.untrusted);
  REQUIRE(hello.status == Status::ok);
  auto decoded = proto::decode_hello_reply(proto::Bytes(hello.payload));
  REQUIRE(decoded.ok());
  CHECK((decoded->capabilities & proto::k_capability_verify) == (1ull << 7));
  CHECK((decoded->capabilities & (1ull << 4)) == 0);  // never used: a persisted number

  const auto image = testing::sample_image(1, 3000);
  const auto damaged = testing::sample_image(2, 3000);
  REQUIRE(f.call(Op::put, proto::encode(testing::sample_put(1, image)), f.trusted).status == Status::ok);
  REQUIRE(f.call(Op::put, proto::encode(testing::sample_put(2, damaged)), f.trusted).status == Status::ok);
  const proto::Digest256 damaged_id = proto::key_id(testing::sample_key(2));
  f.column(
      "UPDATE blobs SET data = zeroblob(length(data)) WHERE entry_id = (SELECT id FROM entries WHERE "
      "hex(key_id) = upper('" +
      proto::to_hex(damaged_id) + "'))");

  Reply refused = f.call(Op::verify, {}, f.untrusted);
  CHECK(refused.status == Status::forbidden);
  CHECK_THAT(message_of(refused), Catch::Contains("VERIFY"));
  CHECK(f.stat("entries") == 2);  // refused before anything was checked or removed

  Reply verify = f.call(Op::verify, {}, f.trusted);
  REQUIRE(verify.status == Status::ok);
  auto report = proto::decode_verify_reply(proto::Bytes(verify.payload));
  REQUIRE(report.ok());
  CHECK(report->integrity == "ok");
  CHECK(report->entries_checked == 2);
  CHECK(report->entries_removed == 1);
  REQUIRE(report->removed.size() == 1);
  CHECK(report->removed[0].key_id == damaged_id);
  CHECK(f.stat("entries") == 1);
  CHECK(f.stat("corrupt_entries") == 1);
  CHECK(f.stat("store_resets") == 0);
  CHECK(f.call(Op::verify, proto::Payload{1}, f.trusted).status == Status::bad_request);
}

TEST_CASE(
    "request handler: a PUT of anything but a cubin that can serve the key's arch is bad_request, and stores nothing") {
  Fixture f;
  const std::string ptx = ".version 9.0\n.target sm_90\n.address_size 64\n.visible .entry k() { ret; }\n";
  proto::PutRequest put = testing::sample_put(1, testing::sample_image(1, 1000));
  put.image = proto::as_bytes(ptx);
  for (const auto* peer : {&f.trusted, &f.untrusted}) {
    Reply text = f.call(Op::put, proto::encode(put), *peer);
    CHECK(text.status == Status::bad_request);
    CHECK_THAT(message_of(text), Catch::Contains("not a cubin") && Catch::Contains("PTX"));
  }

  testing::CubinSpec sm_80;
  sm_80.sm = 80;
  const auto wrong_arch = testing::make_cubin(sm_80, 2, 1000);
  Reply wrong = f.call(Op::put, proto::encode(testing::sample_put(2, wrong_arch)), f.trusted);
  CHECK(wrong.status == Status::bad_request);
  CHECK_THAT(message_of(wrong), Catch::Contains("sm_80 cubin") && Catch::Contains("sm_90"));

  CHECK(f.stat("entries") == 0);
  CHECK(f.stat("puts") == 0);
  CHECK(f.stat("errors.bad_request") == 3);
  REQUIRE(f.call(Op::put, proto::encode(testing::sample_put(3, testing::sample_image(3, 1000))), f.trusted).status ==
          Status::ok);
  CHECK(f.stat("entries") == 1);
}

TEST_CASE("request handler: LOOKUP misses of made-up drivers add no rows to the drivers table") {
  Fixture f;
  REQUIRE(f.call(Op::put, proto::encode(testing::sample_put(1, testing::sample_image(1, 1000))), f.trusted).status ==
          Status::ok);
  REQUIRE(f.store->flush_usage().ok());
  REQUIRE(f.column("SELECT COUNT(*) FROM drivers") == "1");
  for (int i = 0; i < 5000; ++i) {
    proto::LookupRequest lookup;
    lookup.key = testing::sample_key(1);
    lookup.key.driver_build = "made.up." + std::to_string(i);
    REQUIRE(f.call(Op::lookup, proto::encode(lookup), f.untrusted).status == Status::not_found);
    if (i % 1000 == 999) REQUIRE(f.store->flush_usage().ok());
  }
  REQUIRE(f.store->flush_usage().ok());
  CHECK(f.column("SELECT COUNT(*) FROM drivers") == "1");
  // What one flush interval may hold is bounded, and what was dropped is counted.
  for (int i = 0; i < 3000; ++i) {
    proto::LookupRequest lookup;
    lookup.key = testing::sample_key(1);
    lookup.key.driver_build = "made.up.again." + std::to_string(i);
    REQUIRE(f.call(Op::lookup, proto::encode(lookup), f.untrusted).status == Status::not_found);
  }
  CHECK(f.stat("usage_pending") <= daemon::store::k_max_asked_drivers);
  CHECK(f.stat("usage_dropped") >= 3000 - daemon::store::k_max_asked_drivers);
}

namespace {

// The handler over the fixture's real store, with a StoreFaultInjector under it.
struct FaultFixture {
  testing::StoreFaultInjector faults;
  Fixture real{{}, &faults};

  Reply call(Op op, const proto::Payload& payload, const PeerCredentials& peer, std::uint16_t flags = 0) {
    return real.handler.handle(op, proto::Bytes(payload), peer, flags);
  }
};

proto::Payload lookup_by_key(std::uint64_t seed) {
  proto::LookupRequest lookup;
  lookup.key = testing::sample_key(seed);
  return proto::encode(lookup);
}

proto::Payload lookup_by_fast_key(std::uint64_t seed) {
  proto::LookupRequest lookup;
  lookup.selector = proto::LookupSelector::fast_key;
  lookup.fast_key = testing::sample_fast_key(seed);
  return proto::encode(lookup);
}

proto::Payload lookup_by_prefix(const std::string& prefix) {
  proto::LookupRequest lookup;
  lookup.selector = proto::LookupSelector::key_id_prefix;
  lookup.key_id_prefix = prefix;
  return proto::encode(lookup);
}

}  // namespace

TEST_CASE(
    "request handler: a failing store is answered with its error's status, counted, and the next request is served") {
  FaultFixture f;
  const auto image = testing::sample_image(1, 1000);
  REQUIRE(f.call(Op::put, proto::encode(testing::sample_put(1, image)), f.real.trusted).status == Status::ok);

  f.faults.fail_nth(daemon::store::StoreCall::lookup, 1, common::ErrorCode::unavailable);
  CHECK(f.call(Op::lookup, lookup_by_key(1), f.real.untrusted).status == Status::unavailable);
  f.faults.fail_nth(daemon::store::StoreCall::lookup, 1, common::ErrorCode::corrupt);
  Reply corrupt = f.call(Op::lookup, lookup_by_fast_key(1), f.real.untrusted);
  CHECK(corrupt.status == Status::internal);
  CHECK_THAT(message_of(corrupt), Catch::Contains("injected fault"));
  CHECK(f.call(Op::lookup, lookup_by_key(1), f.real.untrusted).status == Status::ok);

  f.faults.fail_every(daemon::store::StoreCall::put, common::ErrorCode::no_space);
  for (int i = 0; i < 2; ++i) {
    CHECK(f.call(Op::put, proto::encode(testing::sample_put(2, image)), f.real.trusted).status == Status::no_space);
  }
  f.faults.fail_nth(daemon::store::StoreCall::report_failure, 1, common::ErrorCode::io);
  CHECK(f.call(Op::report_failure, proto::encode(report_for(1)), f.real.trusted).status == Status::internal);
  f.faults.fail_nth(daemon::store::StoreCall::collect_garbage, 1, common::ErrorCode::unavailable);
  CHECK(f.call(Op::gc, {}, f.real.trusted).status == Status::unavailable);
  f.faults.fail_nth(daemon::store::StoreCall::totals, 1, common::ErrorCode::io);
  CHECK(f.call(Op::stats, {}, f.real.trusted).status == Status::internal);
  f.faults.heal();

  CHECK(f.real.stat("hits") == 1);
  CHECK(f.real.stat("misses") == 0);  // a failed LOOKUP is neither
  CHECK(f.real.stat("puts") == 1);
  CHECK(f.real.stat("failure_reports") == 0);
  CHECK(f.real.stat("errors.unavailable") == 2);
  CHECK(f.real.stat("errors.internal") == 3);
  CHECK(f.real.stat("errors.no_space") == 2);
  CHECK(f.real.stat("entries") == 1);
  CHECK(f.faults.calls(daemon::store::StoreCall::lookup) == 3);
}

TEST_CASE("request handler: every LOOKUP ends the search, one hit or one miss whichever the selector") {
  Fixture f;
  REQUIRE(f.call(Op::put, proto::encode(testing::sample_put(1, testing::sample_image(1, 1000))), f.trusted).status ==
          Status::ok);
  const std::string hex = proto::to_hex(proto::key_id(testing::sample_key(1)));
  CHECK(f.call(Op::lookup, lookup_by_key(1), f.untrusted).status == Status::ok);
  CHECK(f.call(Op::lookup, lookup_by_fast_key(1), f.untrusted).status == Status::ok);
  CHECK(f.call(Op::lookup, lookup_by_prefix(hex.substr(0, 12)), f.untrusted).status == Status::ok);
  CHECK(f.stat("hits") == 3);
  CHECK(f.stat("fast_key_hits") == 1);
  CHECK(f.stat("misses") == 0);

  CHECK(f.call(Op::lookup, lookup_by_key(2), f.untrusted).status == Status::not_found);
  CHECK(f.call(Op::lookup, lookup_by_fast_key(2), f.untrusted).status == Status::not_found);
  CHECK(f.call(Op::lookup, lookup_by_prefix(std::string(12, hex[0] == '0' ? '1' : '0')), f.untrusted).status ==
        Status::not_found);
  CHECK(f.stat("misses") == 3);
  CHECK(f.stat("hits") == 3);
  CHECK(f.stat("fast_key_lookups") == 2);

  // A quarantined entry's miss by fast key says so, as by key.
  REQUIRE(f.call(Op::report_failure, proto::encode(report_for(1)), f.trusted).status == Status::ok);
  CHECK(f.call(Op::lookup, lookup_by_fast_key(1), f.untrusted).status == Status::not_found);
  CHECK(f.call(Op::lookup, lookup_by_key(1), f.untrusted).status == Status::not_found);
  CHECK(f.stat("misses") == 5);
  CHECK(f.stat("misses_quarantined") == 2);
}

TEST_CASE("request handler: a PUT without content_fast is bad_request and stores nothing") {
  Fixture f;
  const auto image = testing::sample_image(1, 1000);
  proto::PutRequest put = testing::sample_put(1, image);
  put.content_fast.reset();
  Reply refused = f.call(Op::put, proto::encode(put), f.trusted);
  CHECK(refused.status == Status::bad_request);
  CHECK_THAT(message_of(refused), Catch::Contains("content_fast"));
  put.content_fast = proto::Checksum128{};
  CHECK(f.call(Op::put, proto::encode(put), f.trusted).status == Status::bad_request);
  CHECK(f.stat("entries") == 0);
  CHECK(f.stat("puts") == 0);
}

TEST_CASE("request handler: a LOOKUP hit is encoded only for the delivery its header's flags ask for") {
  Fixture f;
  const auto small = testing::sample_image(1, 4096);
  const auto large = testing::sample_image(2, daemon::ops::k_min_image_by_descriptor);
  REQUIRE(f.call(Op::put, proto::encode(testing::sample_put(1, small)), f.trusted).status == Status::ok);
  REQUIRE(f.call(Op::put, proto::encode(testing::sample_put(2, large)), f.trusted).status == Status::ok);
  auto lookup = [&](std::uint64_t seed, std::uint16_t flags) {
    return f.handler.handle(Op::lookup, proto::Bytes(lookup_by_fast_key(seed)), f.untrusted, flags);
  };
  auto with_image = [](const Reply& reply) {
    proto::Payload frame = reply.payload;
    frame.insert(frame.end(), reply.image->begin(), reply.image->end());
    return frame;
  };

  // Asked for bytes: the head and the image, as a LOOKUP reply decodes them.
  Reply bytes = lookup(2, 0);
  REQUIRE(bytes.status == Status::ok);
  CHECK_FALSE(bytes.image_by_descriptor);
  const proto::Payload bytes_frame = with_image(bytes);
  auto decoded = proto::decode_lookup_reply(proto::Bytes(bytes_frame));
  REQUIRE(decoded.ok());
  CHECK(std::ranges::equal(decoded->image, large));

  // Asked for a descriptor, an image worth one: only the head that names its size.
  Reply by_fd = lookup(2, proto::k_flag_image_fd);
  REQUIRE(by_fd.status == Status::ok);
  CHECK(by_fd.image_by_descriptor);
  auto head = proto::decode_lookup_reply_by_descriptor(proto::Bytes(by_fd.payload));
  REQUIRE(head.ok());
  CHECK(head->image_size == large.size());
  CHECK(head->info.key == testing::sample_key(2));
  // Without a descriptor to send, the same hit as bytes.
  Reply fallback = daemon::ops::image_as_bytes(by_fd);
  CHECK_FALSE(fallback.image_by_descriptor);
  CHECK(fallback.image == by_fd.image);
  CHECK(with_image(fallback) == bytes_frame);

  // A small image goes as bytes, asked or not.
  Reply small_reply = lookup(1, proto::k_flag_image_fd);
  REQUIRE(small_reply.status == Status::ok);
  CHECK_FALSE(small_reply.image_by_descriptor);
  REQUIRE(proto::decode_lookup_reply(proto::Bytes(with_image(small_reply))).ok());
}

TEST_CASE(
    "request handler: REMOTE_CHECK is announced by bit 10, answers an empty reply without remotes, and only trusted "
    "callers may probe") {
  CHECK(daemon::ops::lane_for(Op::remote_check) == daemon::ops::Lane::worker);
  Fixture f;
  Reply hello = f.call(Op::hello, proto::encode(proto::HelloRequest{1, 1, "test"}), f.untrusted);
  REQUIRE(hello.status == Status::ok);
  auto decoded = proto::decode_hello_reply(proto::Bytes(hello.payload));
  REQUIRE(decoded.ok());
  CHECK((decoded->capabilities & proto::k_capability_remote_check) == (1ull << 10));

  Reply status = f.call(Op::remote_check, proto::encode(proto::RemoteCheckRequest{false}), f.untrusted);
  REQUIRE(status.status == Status::ok);
  auto empty = proto::decode_remote_check_reply(proto::Bytes(status.payload));
  REQUIRE(empty.ok());
  CHECK(empty->remotes.empty());
  CHECK(empty->signer.empty());

  Reply refused = f.call(Op::remote_check, proto::encode(proto::RemoteCheckRequest{true}), f.untrusted);
  CHECK(refused.status == Status::forbidden);
  CHECK_THAT(message_of(refused), Catch::Contains("jitcache remote status"));
  CHECK(f.call(Op::remote_check, proto::encode(proto::RemoteCheckRequest{true}), f.trusted).status == Status::ok);
  CHECK(f.call(Op::remote_check, proto::Payload{2}, f.trusted).status == Status::bad_request);
  CHECK(f.call(Op::remote_check, proto::Payload{}, f.trusted).status == Status::bad_request);
}

TEST_CASE(
    "request handler: REMOTE_CHECK reports the fleet tier the counters name, and probes it for a trusted caller") {
  Fixture f;
  auto backend = std::make_unique<testing::MemoryBackend>();
  testing::MemoryBackend& memory = *backend;
  std::vector<std::unique_ptr<daemon::remote::RemoteBackend>> backends;
  backends.push_back(std::move(backend));
  // A host without a signing key: reads only, so the tier starts no upload thread.
  daemon::remote::RemoteTier tier({}, std::move(backends),
                                  daemon::remote::TrustedKeys({proto::SigningKey::generate().public_key()}), {});
  f.counters.fleet = &tier;

  Reply status = f.call(Op::remote_check, proto::encode(proto::RemoteCheckRequest{false}), f.untrusted);
  REQUIRE(status.status == Status::ok);
  auto known = proto::decode_remote_check_reply(proto::Bytes(status.payload));
  REQUIRE(known.ok());
  REQUIRE(known->remotes.size() == 1);
  CHECK(known->remotes[0].name == "memory://test");
  CHECK(known->remotes[0].reachable == proto::ProbeAnswer::not_probed);
  CHECK(known->trusted.size() == 1);
  CHECK(memory.calls() == 0);

  Reply probed = f.call(Op::remote_check, proto::encode(proto::RemoteCheckRequest{true}), f.trusted);
  REQUIRE(probed.status == Status::ok);
  auto found = proto::decode_remote_check_reply(proto::Bytes(probed.payload));
  REQUIRE(found.ok());
  REQUIRE(found->remotes.size() == 1);
  CHECK(found->remotes[0].reachable == proto::ProbeAnswer::yes);
  CHECK(found->remotes[0].writable == proto::ProbeAnswer::not_probed);
  CHECK(memory.calls() == 1);
  f.counters.fleet = nullptr;
}

TEST_CASE(
    "request handler: EXPLAIN and MISSES are announced by bit 11, refuse bad requests, and a failing store is an "
    "error, not a wrong answer") {
  CHECK(daemon::ops::lane_for(Op::explain) == daemon::ops::Lane::diagnosis);
  CHECK(daemon::ops::lane_for(Op::misses) == daemon::ops::Lane::diagnosis);
  FaultFixture f;
  Reply hello = f.call(Op::hello, proto::encode(proto::HelloRequest{1, 1, "test"}), f.real.untrusted);
  auto decoded = proto::decode_hello_reply(proto::Bytes(hello.payload));
  REQUIRE(decoded.ok());
  CHECK((decoded->capabilities & proto::k_capability_explain) == (1ull << 11));

  const auto image = testing::sample_image(1, 1000);
  REQUIRE(f.call(Op::put, proto::encode(testing::sample_put(1, image)), f.real.trusted).status == Status::ok);
  REQUIRE(f.call(Op::lookup, lookup_by_key(2), f.real.untrusted).status == Status::not_found);
  const proto::ExplainRequest by_key{proto::ExplainSelector::key, testing::sample_key(1), {}};
  Reply hit = f.call(Op::explain, proto::encode(by_key), f.real.untrusted);
  REQUIRE(hit.status == Status::ok);
  auto explained = proto::decode_explain_reply(proto::Bytes(hit.payload));
  REQUIRE(explained.ok());
  CHECK(explained->verdict == proto::ExplainVerdict::hit);
  CHECK(f.real.stat("explains") == 1);
  CHECK(f.real.stat("hits") == 0);  // EXPLAIN reads; it serves nothing

  proto::ExplainRequest invalid = by_key;
  invalid.key.arch = "sm_9x";
  CHECK(f.call(Op::explain, proto::encode(invalid), f.real.untrusted).status == Status::bad_request);
  CHECK(f.call(Op::explain, proto::Payload{7}, f.real.untrusted).status == Status::bad_request);
  CHECK(f.call(Op::misses, proto::encode(proto::MissesRequest{0}), f.real.untrusted).status == Status::bad_request);
  f.faults.fail_nth(daemon::store::StoreCall::near_entries, 1, common::ErrorCode::io);
  CHECK(f.call(Op::explain, proto::encode(by_key), f.real.untrusted).status == Status::internal);

  Reply misses = f.call(Op::misses, proto::encode(proto::MissesRequest{10}), f.real.untrusted);
  REQUIRE(misses.status == Status::ok);
  auto listed = proto::decode_misses_reply(proto::Bytes(misses.payload));
  REQUIRE(listed.ok());
  REQUIRE(listed->misses.size() == 1);
  CHECK(listed->misses[0].key == testing::sample_key(2));
  CHECK(listed->misses[0].uid == f.real.untrusted.uid);
  Reply others =
      f.call(Op::misses, proto::encode(proto::MissesRequest{10}), PeerCredentials{untrusted_uid() + 1, 100, 1});
  auto none = proto::decode_misses_reply(proto::Bytes(others.payload));
  REQUIRE(none.ok());
  CHECK(none->misses.empty());  // another uid's misses are not shown
}

TEST_CASE(
    "request handler: an EXPLAIN whose store read fails half-way is an error, and LOOKUPs of the same key go on being "
    "served") {
  FaultFixture f;
  const auto image = testing::sample_image(1, 1000);
  REQUIRE(f.call(Op::put, proto::encode(testing::sample_put(1, image)), f.real.trusted).status == Status::ok);
  const proto::ExplainRequest by_key{proto::ExplainSelector::key, testing::sample_key(1), {}};

  // Every step of the queries for the entries near a key fails (daemon/store/sqlite_diagnosis.cpp).
  f.faults.fail_every_step("(SELECT reported_at_ms FROM failure_reports", common::ErrorCode::io);
  for (int i = 0; i < 3; ++i) {
    Reply failed = f.call(Op::explain, proto::encode(by_key), f.real.untrusted);
    CHECK(failed.status == Status::internal);
    CHECK_THAT(message_of(failed), Catch::Contains("injected fault"));
    CHECK(f.call(Op::lookup, lookup_by_key(1), f.real.untrusted).status == Status::ok);
    CHECK(f.call(Op::lookup, lookup_by_fast_key(1), f.real.untrusted).status == Status::ok);
  }
  CHECK(f.faults.failed_steps() >= 3);
  CHECK(f.real.stat("hits") == 6);
  f.faults.heal();

  Reply explained = f.call(Op::explain, proto::encode(by_key), f.real.untrusted);
  REQUIRE(explained.status == Status::ok);
  auto reply = proto::decode_explain_reply(proto::Bytes(explained.payload));
  REQUIRE(reply.ok());
  CHECK(reply->verdict == proto::ExplainVerdict::hit);
}
