// The client's one LOOKUP policy (client/src/loader/lookup_policy.hpp), which a module load
// (LoadFlow, load_flow_lookup.cpp) and a link session (link::LinkCache) both follow, against a fake
// cache port (tests/support/fake_cache_port.hpp): which LOOKUP is sent for what the daemon is known
// to have, what a fast-key hit of another content, a refused selector 2 and a failing HELLO lead
// to, and that the key (a load's content digest, still being computed) is waited for only once the
// fast-key LOOKUP is sent. Each case runs as a load asks (each request timed, images as descriptors
// where large) and as a link asks (bytes, untimed): the answers and requests must be the same.
#include <client/src/loader/lookup_policy.hpp>

#include <catch2/catch.hpp>

#include <cstdint>
#include <optional>
#include <vector>

#include <proto/jit_options.hpp>
#include <tests/support/fake_cache_port.hpp>

using namespace jitcache;
using client::loader::ClientCounters;
using client::loader::LoadRecord;
using client::loader::look_up_entry;
using client::loader::LookupAsk;
using testing::FakeCachePort;

namespace {

proto::KeyFields key_of(std::uint8_t content) {
  proto::KeyFields key;
  key.content.bytes.fill(content);
  key.arch = "sm_90";
  key.driver_api = 13000;
  key.driver_build = "580.159.04";
  key.options = proto::default_option_text();
  return key;
}

proto::Checksum128 fast_of(std::uint8_t content) {
  proto::Checksum128 fast;
  fast.bytes.fill(content);
  return fast;
}

const proto::KeyFields k_key = key_of(1);
const proto::Checksum128 k_fast = fast_of(1);

FakeCachePort::Entry entry(const proto::KeyFields& key, std::optional<proto::Checksum128> fast,
                           std::uint8_t image_byte) {
  return {key, fast, std::vector<std::uint8_t>(64, image_byte)};
}

enum class Caller { load, link };

struct Asked {
  common::Result<std::optional<client::transport::FetchedImage>> result{std::nullopt};
  ClientCounters counters;
  // How many fast-key LOOKUPs had been sent when the key was first asked for (-1: never asked).
  int fast_lookups_before_key = -1;
};

// One look-up on `port` as `caller` asks it; the answer, the counters and when the key was wanted in `asked`.
void ask(FakeCachePort& port, Caller caller, Asked& asked) {
  LoadRecord record;
  const LookupAsk request{proto::fast_key_of(k_key, k_fast),
                          [&]() -> const proto::KeyFields& {
                            if (asked.fast_lookups_before_key < 0) {
                              asked.fast_lookups_before_key = static_cast<int>(port.fast_lookups.size());
                            }
                            return k_key;
                          },
                          caller == Caller::load ? client::transport::ImageDelivery::descriptor_if_large
                                                 : client::transport::ImageDelivery::bytes,
                          caller == Caller::load ? &record : nullptr};
  asked.result = look_up_entry(port, request, asked.counters);
}

constexpr std::uint64_t k_without_fast_keys = proto::k_capability_store | proto::k_capability_report_failure;

}  // namespace

TEST_CASE("lookup policy: a daemon known to have fast keys is asked by fast key, once, for a hit or a final miss") {
  const Caller caller = GENERATE(Caller::load, Caller::link);
  FakeCachePort port;
  port.capabilities_known = true;
  SECTION("hit") {
    port.entries = {entry(k_key, k_fast, 7)};
    Asked asked;
    ask(port, caller, asked);
    REQUIRE(asked.result);
    REQUIRE(asked.result->has_value());
    CHECK((*asked.result)->image.size() == 64);
    CHECK((*asked.result)->info.key == k_key);
  }
  SECTION("miss") {
    Asked asked;
    ask(port, caller, asked);
    REQUIRE(asked.result);
    CHECK_FALSE(asked.result->has_value());
  }
  CHECK(port.fast_lookups.size() == 1);
  CHECK(port.fast_lookups[0] == proto::fast_key_of(k_key, k_fast));
  CHECK(port.key_lookups.empty());
  CHECK(port.hellos == 0);
}

TEST_CASE("lookup policy: a daemon known to lack fast keys is asked by key only") {
  const Caller caller = GENERATE(Caller::load, Caller::link);
  FakeCachePort port;
  port.capabilities_known = true;
  port.capability_bits = k_without_fast_keys;
  port.entries = {entry(k_key, std::nullopt, 7)};
  Asked asked;
  ask(port, caller, asked);
  REQUIRE(asked.result);
  REQUIRE(asked.result->has_value());
  CHECK(port.fast_lookups.empty());
  REQUIRE(port.key_lookups.size() == 1);
  CHECK(port.key_lookups[0] == k_key);
  CHECK(asked.fast_lookups_before_key == 0);
}

TEST_CASE("lookup policy: an entry found by fast key with another content digest is never the answer, the key is") {
  const Caller caller = GENERATE(Caller::load, Caller::link);
  const bool known = GENERATE(true, false);
  FakeCachePort port;
  port.capabilities_known = known;
  // Another source whose fast key is ours (an XXH3 collision, or a writer that lied), then our own
  // entry, found by its key only.
  port.entries = {entry(key_of(2), k_fast, 9), entry(k_key, std::nullopt, 7)};
  Asked asked;
  ask(port, caller, asked);
  REQUIRE(asked.result);
  REQUIRE(asked.result->has_value());
  CHECK((*asked.result)->info.key == k_key);
  CHECK((*asked.result)->image.front() == 7);
  CHECK(asked.counters.fast_key_mismatches.load() == 1);
  CHECK(port.fast_lookups.size() == 1);
  CHECK(port.key_lookups.size() == 1);
  CHECK(port.hellos == 0);
}

TEST_CASE(
    "lookup policy: on a fresh connection a hit costs no HELLO, and the key is waited for after the LOOKUP is "
    "sent") {
  const Caller caller = GENERATE(Caller::load, Caller::link);
  FakeCachePort port;
  port.entries = {entry(k_key, k_fast, 7)};
  Asked asked;
  ask(port, caller, asked);
  REQUIRE(asked.result);
  REQUIRE(asked.result->has_value());
  CHECK(port.hellos == 0);
  CHECK(port.key_lookups.empty());
  CHECK(asked.fast_lookups_before_key == 1);
}

TEST_CASE("lookup policy: on a fresh connection a miss sends HELLO, and a daemon with fast keys makes it final") {
  const Caller caller = GENERATE(Caller::load, Caller::link);
  FakeCachePort port;
  Asked asked;
  ask(port, caller, asked);
  REQUIRE(asked.result);
  CHECK_FALSE(asked.result->has_value());
  CHECK(port.hellos == 1);
  CHECK(port.fast_lookups.size() == 1);
  CHECK(port.key_lookups.empty());
}

TEST_CASE("lookup policy: an older daemon that refuses selector 2 and has no fast keys is asked by key") {
  const Caller caller = GENERATE(Caller::load, Caller::link);
  FakeCachePort port;
  port.capability_bits = k_without_fast_keys;
  port.lookup_fast_status = proto::Status::bad_request;
  port.entries = {entry(k_key, std::nullopt, 7)};
  Asked asked;
  ask(port, caller, asked);
  REQUIRE(asked.result);
  REQUIRE(asked.result->has_value());
  CHECK(port.hellos == 1);
  CHECK(port.key_lookups.size() == 1);
}

TEST_CASE("lookup policy: a fast-key miss at a daemon whose HELLO shows no fast keys asks the key") {
  const Caller caller = GENERATE(Caller::load, Caller::link);
  FakeCachePort port;
  port.capability_bits = k_without_fast_keys;
  port.entries = {entry(k_key, std::nullopt, 7)};
  Asked asked;
  ask(port, caller, asked);
  REQUIRE(asked.result);
  REQUIRE(asked.result->has_value());
  CHECK(port.hellos == 1);
  CHECK(port.fast_lookups.size() == 1);
  CHECK(port.key_lookups.size() == 1);
}

TEST_CASE("lookup policy: a refused fast-key LOOKUP other than bad_request is the answer, and nothing more is asked") {
  const Caller caller = GENERATE(Caller::load, Caller::link);
  const bool known = GENERATE(true, false);
  FakeCachePort port;
  port.capabilities_known = known;
  port.lookup_fast_status = proto::Status::busy;
  Asked asked;
  ask(port, caller, asked);
  REQUIRE_FALSE(asked.result);
  CHECK(asked.result.error().reply_status == static_cast<std::uint16_t>(proto::Status::busy));
  CHECK(port.hellos == 0);
  CHECK(port.key_lookups.empty());
}

TEST_CASE("lookup policy: a daemon that fails the LOOKUP or the HELLO is the answer, and nothing more is asked") {
  const Caller caller = GENERATE(Caller::load, Caller::link);
  FakeCachePort port;
  SECTION("the fast-key LOOKUP") {
    port.lookup_fast_fails = true;
    Asked asked;
    ask(port, caller, asked);
    REQUIRE_FALSE(asked.result);
    CHECK(asked.result.error().reply_status == 0);
    CHECK(port.hellos == 0);
  }
  SECTION("the HELLO after a miss") {
    port.connect_error = common::make_error(common::ErrorCode::unavailable, "the daemon hung up");
    Asked asked;
    ask(port, caller, asked);
    REQUIRE_FALSE(asked.result);
    CHECK(asked.result.error().reply_status == 0);
    CHECK(port.fast_lookups.size() == 1);
  }
  CHECK(port.key_lookups.empty());
}

TEST_CASE(
    "lookup policy: a HELLO answered with an error status after a miss says nothing of fast keys: the key is "
    "asked") {
  const Caller caller = GENERATE(Caller::load, Caller::link);
  FakeCachePort port;
  port.hello_status = proto::Status::busy;
  port.entries = {entry(k_key, std::nullopt, 7)};
  Asked asked;
  ask(port, caller, asked);
  REQUIRE(asked.result);
  REQUIRE(asked.result->has_value());
  CHECK(port.fast_lookups.size() == 1);
  CHECK(port.key_lookups.size() == 1);
}
