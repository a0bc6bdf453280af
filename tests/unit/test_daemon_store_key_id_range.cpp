// Hex key-id prefixes as BLOB ranges: every key id with the prefix falls inside, every other
// outside, for even and odd lengths and at the top of the key space.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include <proto/digest.hpp>

#include <daemon/store/key_id_range.hpp>

namespace {

using jitcache::daemon::store::key_id_range;
using jitcache::daemon::store::KeyIdRange;

using ByteVector = std::vector<std::uint8_t>;

KeyIdRange range_of(const std::string& prefix) {
  auto range = key_id_range(prefix, 0);
  REQUIRE(range.ok());
  return *range;
}

// SQLite's BLOB order.
bool inside(const KeyIdRange& range, const ByteVector& key) {
  auto less = [](const ByteVector& a, const ByteVector& b) {
    return std::lexicographical_compare(a.begin(), a.end(), b.begin(), b.end());
  };
  return !less(key, range.lo) && less(key, range.hi);
}

ByteVector key_from_hex(const std::string& hex) {
  auto digest = jitcache::proto::digest_from_hex(hex);
  REQUIRE(digest.has_value());
  return ByteVector(digest->bytes.begin(), digest->bytes.end());
}

}  // namespace

TEST_CASE("key id range: an even prefix covers exactly the key ids that start with it") {
  const auto range = range_of("abcd");
  CHECK(range.lo == ByteVector{0xab, 0xcd});
  CHECK(range.hi == ByteVector{0xab, 0xce});
  CHECK(inside(range, key_from_hex("abcd" + std::string(60, '0'))));
  CHECK(inside(range, key_from_hex("abcd" + std::string(60, 'f'))));
  CHECK_FALSE(inside(range, key_from_hex("abcc" + std::string(60, 'f'))));
  CHECK_FALSE(inside(range, key_from_hex("abce" + std::string(60, '0'))));
}

TEST_CASE("key id range: an odd prefix ends in half a byte") {
  const auto range = range_of("abc");
  CHECK(range.lo == ByteVector{0xab, 0xc0});
  CHECK(range.hi == ByteVector{0xab, 0xd0});
  CHECK(inside(range, key_from_hex("abc0" + std::string(60, '0'))));
  CHECK(inside(range, key_from_hex("abcf" + std::string(60, 'f'))));
  CHECK_FALSE(inside(range, key_from_hex("abbf" + std::string(60, 'f'))));
  CHECK_FALSE(inside(range, key_from_hex("abd0" + std::string(60, '0'))));
}

TEST_CASE("key id range: a trailing f carries into the digits before it") {
  CHECK(range_of("1ff").hi == ByteVector{0x20, 0x00});
  CHECK(range_of("0aff").hi == ByteVector{0x0b, 0x00});
  const auto range = range_of("1ff");
  CHECK(inside(range, key_from_hex("1fff" + std::string(60, 'f'))));
  CHECK_FALSE(inside(range, key_from_hex("2000" + std::string(60, '0'))));
}

TEST_CASE("key id range: an all-f or empty prefix still has an upper bound above every key id") {
  const ByteVector top = key_from_hex(std::string(64, 'f'));
  for (const std::string& prefix : {std::string(""), std::string("f"), std::string("ffffffff"), std::string(64, 'f')}) {
    INFO("prefix \"" << prefix << "\"");
    const auto range = range_of(prefix);
    CHECK(range.hi.size() == 33);
    CHECK(inside(range, top));
  }
  CHECK(inside(range_of(""), key_from_hex(std::string(64, '0'))));
  CHECK_FALSE(inside(range_of("f"), key_from_hex("e" + std::string(63, 'f'))));
}

TEST_CASE("key id range: a full 64-digit prefix matches that key id alone") {
  const std::string hex = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
  const auto range = range_of(hex);
  CHECK(inside(range, key_from_hex(hex)));
  CHECK_FALSE(inside(range, key_from_hex(hex.substr(0, 63) + "e")));
  CHECK_FALSE(inside(range, key_from_hex(hex.substr(0, 63) + "0")));
  CHECK(range_of("ABCDEF").lo == range_of("abcdef").lo);
}

TEST_CASE("key id range: too short, too long or non-hex prefixes are invalid arguments") {
  using jitcache::common::ErrorCode;
  for (const std::string& bad : {std::string("abc"), std::string("0123456"), std::string(65, '0'),
                                 std::string("0123456z"), std::string("01234 67")}) {
    INFO("\"" << bad << "\"");
    auto range = key_id_range(bad, 8);
    REQUIRE_FALSE(range.ok());
    CHECK(range.error().code == ErrorCode::invalid_argument);
  }
  CHECK(key_id_range("", 0).ok());
  CHECK_FALSE(key_id_range("", 8).ok());
}
