// REMOTE_CHECK's payload codec against proto/PROTOCOL.md §5 REMOTE_CHECK: the field order byte by
// byte, round trips, the encoder's cuts to the limits, and a decoder that refuses every malformed
// reply (trailing bytes, truncation, counts over their limits, signers that are not 16 hex digits,
// values outside their tables) instead of guessing.
#include <catch2/catch.hpp>

#include <proto/remote_check_messages.hpp>

#include <cstdint>
#include <string>
#include <vector>

using namespace jitcache::proto;
using jitcache::common::ErrorCode;

namespace {

RemoteCheckReply sample_reply() {
  RemoteCheckReply m;
  m.signer = "0123456789abcdef";
  m.trusted = {"0123456789abcdef", "fedcba9876543210"};
  RemoteCheckRemote redis;
  redis.name = "redis://builder@10.0.0.5:6379/0";
  redis.breaker = BreakerState::closed;
  redis.reachable = ProbeAnswer::yes;
  redis.writable = ProbeAnswer::yes;
  redis.leases = LeaseSupport::supported;
  redis.latency_us = 312;
  RemoteCheckRemote http;
  http.name = "https://cache.internal/jc";
  http.breaker = BreakerState::half_open;
  http.reachable = ProbeAnswer::no;
  http.leases = LeaseSupport::unsupported;
  http.latency_us = 2'000'123;
  http.message = "ping: connect to cache.internal:443: Connection refused";
  m.remotes = {redis, http};
  return m;
}

void check_same(const RemoteCheckReply& a, const RemoteCheckReply& b) {
  CHECK(a.signer == b.signer);
  CHECK(a.signing_message == b.signing_message);
  CHECK(a.trusted == b.trusted);
  REQUIRE(a.remotes.size() == b.remotes.size());
  for (std::size_t i = 0; i < a.remotes.size(); ++i) {
    INFO("remote " << i);
    CHECK(a.remotes[i].name == b.remotes[i].name);
    CHECK(a.remotes[i].breaker == b.remotes[i].breaker);
    CHECK(a.remotes[i].reachable == b.remotes[i].reachable);
    CHECK(a.remotes[i].writable == b.remotes[i].writable);
    CHECK(a.remotes[i].leases == b.remotes[i].leases);
    CHECK(a.remotes[i].latency_us == b.remotes[i].latency_us);
    CHECK(a.remotes[i].message == b.remotes[i].message);
  }
}

void append_str16(Payload& out, const std::string& s) {
  out.push_back(static_cast<std::uint8_t>(s.size()));
  out.push_back(static_cast<std::uint8_t>(s.size() >> 8));
  out.insert(out.end(), s.begin(), s.end());
}

// A reply with one remote whose fields are given as bytes, for the malformed cases.
Payload one_remote_reply(std::uint8_t breaker, std::uint8_t reachable, std::uint8_t writable, std::uint8_t leases) {
  Payload out;
  append_str16(out, "");                // signer
  append_str16(out, "");                // signing_message
  out.insert(out.end(), {0, 0, 1, 0});  // no trusted key, one remote
  append_str16(out, "redis://127.0.0.1:6379/0");
  out.insert(out.end(), {breaker, reachable, writable, leases});
  out.insert(out.end(), {1, 0, 0, 0, 0, 0, 0, 0});  // latency_us 1
  append_str16(out, "");                            // message
  return out;
}

}  // namespace

TEST_CASE("remote check messages: a request is the probe byte, 0 or 1, and nothing else") {
  CHECK(encode(RemoteCheckRequest{false}) == Payload{0});
  CHECK(encode(RemoteCheckRequest{true}) == Payload{1});
  for (bool probe : {false, true}) {
    auto decoded = decode_remote_check_request(Bytes(encode(RemoteCheckRequest{probe})));
    REQUIRE(decoded.ok());
    CHECK(decoded->probe == probe);
  }
  const Payload two{2};
  auto refused = decode_remote_check_request(Bytes(two));
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.error().code == ErrorCode::invalid_argument);
  CHECK_THAT(refused.error().message, Catch::Contains("probe 2"));
  CHECK_FALSE(decode_remote_check_request({}).ok());
  const Payload trailing{1, 0};
  CHECK_FALSE(decode_remote_check_request(Bytes(trailing)).ok());
}

TEST_CASE("remote check messages: a reply encodes as signer, signing_message, the trusted keys, then each remote") {
  RemoteCheckReply m;
  m.signer = "00112233445566ff";
  m.signing_message = "bad";
  m.trusted = {"00112233445566ff"};
  RemoteCheckRemote remote;
  remote.name = "r";
  remote.breaker = BreakerState::open;
  remote.reachable = ProbeAnswer::no;
  remote.writable = ProbeAnswer::not_probed;
  remote.leases = LeaseSupport::unsupported;
  remote.latency_us = 0x0102;
  remote.message = "m";
  m.remotes = {remote};
  Payload expected;
  append_str16(expected, "00112233445566ff");
  append_str16(expected, "bad");
  expected.insert(expected.end(), {1, 0});
  append_str16(expected, "00112233445566ff");
  expected.insert(expected.end(), {1, 0});
  append_str16(expected, "r");
  expected.insert(expected.end(), {1, 2, 0, 2});
  expected.insert(expected.end(), {0x02, 0x01, 0, 0, 0, 0, 0, 0});
  append_str16(expected, "m");
  CHECK(encode(m) == expected);
}

TEST_CASE("remote check messages: a reply round-trips, and so does the empty reply of a daemon without remotes") {
  const RemoteCheckReply sample = sample_reply();
  auto decoded = decode_remote_check_reply(Bytes(encode(sample)));
  REQUIRE(decoded.ok());
  check_same(*decoded, sample);

  const Payload empty = encode(RemoteCheckReply{});
  CHECK(empty == Payload{0, 0, 0, 0, 0, 0, 0, 0});
  auto none = decode_remote_check_reply(Bytes(empty));
  REQUIRE(none.ok());
  CHECK(none->signer.empty());
  CHECK(none->trusted.empty());
  CHECK(none->remotes.empty());
}

TEST_CASE("remote check messages: every value of the breaker, probe and lease tables round-trips, and 3 is refused") {
  for (std::uint8_t v = 0; v <= 2; ++v) {
    INFO("value " << int(v));
    CHECK(decode_remote_check_reply(Bytes(one_remote_reply(v, v, v, v))).ok());
  }
  const std::vector<std::pair<Payload, std::string>> refused{
      {one_remote_reply(3, 0, 0, 0), "breaker 3"},
      {one_remote_reply(0, 3, 0, 0), "reachable 3"},
      {one_remote_reply(0, 0, 3, 0), "writable 3"},
      {one_remote_reply(0, 0, 0, 3), "leases 3"},
  };
  for (const auto& [payload, what] : refused) {
    INFO(what);
    auto decoded = decode_remote_check_reply(Bytes(payload));
    REQUIRE_FALSE(decoded.ok());
    CHECK(decoded.error().code == ErrorCode::invalid_argument);
    CHECK_THAT(decoded.error().message, Catch::Contains(what));
  }
  CHECK(breaker_state_name(BreakerState::half_open) == "half_open");
  CHECK(probe_answer_name(ProbeAnswer::not_probed) == "not_probed");
  CHECK(lease_support_name(LeaseSupport::unsupported) == "unsupported");
  CHECK(breaker_state_name(static_cast<BreakerState>(3)) == "unknown");
}

TEST_CASE("remote check messages: a reply with a trailing byte, or cut short anywhere, is malformed") {
  const Payload whole = encode(sample_reply());
  Payload trailing = whole;
  trailing.push_back(0);
  CHECK_FALSE(decode_remote_check_reply(Bytes(trailing)).ok());
  for (std::size_t size = 0; size < whole.size(); ++size) {
    INFO("the first " << size << " bytes");
    auto decoded = decode_remote_check_reply(Bytes(whole).first(size));
    REQUIRE_FALSE(decoded.ok());
    CHECK(decoded.error().code == ErrorCode::invalid_argument);
  }
}

TEST_CASE(
    "remote check messages: a signer that is not 16 lower-case hex digits is malformed, an empty one only as signer") {
  auto reply_with = [](const std::string& signer, const std::string& trusted) {
    Payload out;
    append_str16(out, signer);
    append_str16(out, "");
    out.insert(out.end(), {1, 0});
    append_str16(out, trusted);
    out.insert(out.end(), {0, 0});
    return out;
  };
  CHECK(decode_remote_check_reply(Bytes(reply_with("", "0123456789abcdef"))).ok());
  CHECK(decode_remote_check_reply(Bytes(reply_with("0123456789abcdef", "0123456789abcdef"))).ok());
  CHECK_FALSE(decode_remote_check_reply(Bytes(reply_with("0123456789ABCDEF", "0123456789abcdef"))).ok());
  CHECK_FALSE(decode_remote_check_reply(Bytes(reply_with("0123456789abcde", "0123456789abcdef"))).ok());
  CHECK_FALSE(decode_remote_check_reply(Bytes(reply_with("0123456789abcdeg", "0123456789abcdef"))).ok());
  CHECK_FALSE(decode_remote_check_reply(Bytes(reply_with("", ""))).ok());
  CHECK_FALSE(decode_remote_check_reply(Bytes(reply_with("", "0123456789abcdef0"))).ok());
  CHECK(is_signer_hex("0123456789abcdef"));
  CHECK_FALSE(is_signer_hex("0123456789abcdeF"));
}

TEST_CASE("remote check messages: more than 256 trusted keys or 64 remotes is malformed, at the limits it decodes") {
  auto with_counts = [](std::size_t trusted, std::size_t remotes) {
    Payload out;
    append_str16(out, "");
    append_str16(out, "");
    out.insert(out.end(), {static_cast<std::uint8_t>(trusted), static_cast<std::uint8_t>(trusted >> 8)});
    for (std::size_t i = 0; i < trusted; ++i) append_str16(out, "0123456789abcdef");
    out.insert(out.end(), {static_cast<std::uint8_t>(remotes), static_cast<std::uint8_t>(remotes >> 8)});
    for (std::size_t i = 0; i < remotes; ++i) {
      append_str16(out, "redis://r");
      out.insert(out.end(), {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0});
      append_str16(out, "");
    }
    return out;
  };
  CHECK(decode_remote_check_reply(Bytes(with_counts(k_max_remote_check_trusted, k_max_remote_check_remotes))).ok());
  auto keys = decode_remote_check_reply(Bytes(with_counts(k_max_remote_check_trusted + 1, 0)));
  REQUIRE_FALSE(keys.ok());
  CHECK_THAT(keys.error().message, Catch::Contains("257 trusted keys"));
  auto remotes = decode_remote_check_reply(Bytes(with_counts(0, k_max_remote_check_remotes + 1)));
  REQUIRE_FALSE(remotes.ok());
  CHECK_THAT(remotes.error().message, Catch::Contains("65 remotes"));
}

TEST_CASE(
    "remote check messages: a name over 512 bytes or a message over 1024 is too_large, and the encoder cuts both") {
  RemoteCheckReply m = sample_reply();
  m.remotes[0].name = std::string(k_max_remote_name_length + 10, 'n');
  m.remotes[1].message = std::string(k_max_remote_message_length + 10, 'm');
  m.signing_message = std::string(k_max_remote_message_length + 1, 's');
  auto decoded = decode_remote_check_reply(Bytes(encode(m)));
  REQUIRE(decoded.ok());
  CHECK(decoded->remotes[0].name == std::string(k_max_remote_name_length, 'n'));
  CHECK(decoded->remotes[1].message == std::string(k_max_remote_message_length, 'm'));
  CHECK(decoded->signing_message.size() == k_max_remote_message_length);

  Payload long_name;
  append_str16(long_name, "");
  append_str16(long_name, "");
  long_name.insert(long_name.end(), {0, 0, 1, 0});
  append_str16(long_name, std::string(k_max_remote_name_length + 1, 'n'));
  long_name.insert(long_name.end(), {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0});
  append_str16(long_name, "");
  auto refused = decode_remote_check_reply(Bytes(long_name));
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.error().code == ErrorCode::too_large);
}

TEST_CASE("remote check messages: the encoder lists the first 64 remotes and 256 trusted keys of a larger set") {
  RemoteCheckReply m;
  m.trusted.assign(k_max_remote_check_trusted + 5, "0123456789abcdef");
  RemoteCheckRemote remote;
  for (std::size_t i = 0; i < k_max_remote_check_remotes + 3; ++i) {
    remote.name = "redis://host" + std::to_string(i);
    m.remotes.push_back(remote);
  }
  auto decoded = decode_remote_check_reply(Bytes(encode(m)));
  REQUIRE(decoded.ok());
  CHECK(decoded->trusted.size() == k_max_remote_check_trusted);
  REQUIRE(decoded->remotes.size() == k_max_remote_check_remotes);
  CHECK(decoded->remotes.back().name == "redis://host63");
}
