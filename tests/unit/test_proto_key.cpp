// The cache key: digests, the key-id encoding, field validation and the driver id parser.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include <proto/digest.hpp>
#include <proto/jit_options.hpp>
#include <proto/key.hpp>

using namespace jitcache::proto;
using namespace jitcache::common;

namespace {

// Written out, not taken from default_option_text(), so that the known answer below pins the
// encoding of the key id independently of the canonicaliser.
const std::string k_default_options =
    "maxrreg=0;tpb=0;opt=4;g=0;lineinfo=0;dlcm=none;fast=0;lto=0;ftz=0;prec_div=1;prec_sqrt=1;fma=1;pic=0;"
    "mincta=0;maxtpb=0;override=0;split=1";

KeyFields sample_key() {
  KeyFields key;
  key.content = content_digest(as_bytes("jitcache known-answer source"));
  key.arch = "sm_90a";
  key.driver_api = 13000;
  key.driver_build = "580.159.04";
  key.options = k_default_options;
  return key;
}

void put_u32(std::vector<std::uint8_t>& out, std::uint32_t v) {
  for (int shift = 0; shift < 32; shift += 8) out.push_back(static_cast<std::uint8_t>(v >> shift));
}

void put_string(std::vector<std::uint8_t>& out, const std::string& s) {
  put_u32(out, static_cast<std::uint32_t>(s.size()));
  out.insert(out.end(), s.begin(), s.end());
}

std::string validation_message(const KeyFields& key) {
  auto result = validate_key(key);
  REQUIRE_FALSE(result.ok());
  CHECK(result.error().code == ErrorCode::invalid_argument);
  return result.error().message;
}

}  // namespace

TEST_CASE("key: the content digest is the chunked SHA-256 of content_digest.hpp (known answers)") {
  // Computed independently (Python hashlib) from the definition in docs/cache-key.md.
  CHECK(to_hex(content_digest(as_bytes(""))) == "8a4d73bd2738c65164e3f71a19bd1feb7621daaa298a64051c2cfd3298c83337");
  CHECK(to_hex(content_digest(as_bytes("abc"))) == "a59144558080930bd8f0845418ea68085a9ed559c43770b5b638937f7a05f997");
  // Four chunks, the last one short: the parallel path, which must give the same answer.
  std::vector<std::uint8_t> big(3 * k_content_chunk_size + 1000);
  for (std::size_t i = 0; i < big.size(); ++i) big[i] = static_cast<std::uint8_t>((i * 7 + 3) % 251);
  CHECK(to_hex(content_digest(Bytes(big))) == "596786ed68130a0a1e83840c65fe65c81f3ebeaeea086c7d7c5e5dc813f55949");
}

TEST_CASE("key: the content digest is not plain SHA-256, and each chunk and the length count") {
  CHECK(content_digest(as_bytes("abc")) != sha256(as_bytes("abc")));
  std::vector<std::uint8_t> a(2 * k_content_chunk_size, 1);
  auto b = a;
  b[k_content_chunk_size + 5] ^= 1;  // a change in the second chunk only
  CHECK(content_digest(Bytes(a)) != content_digest(Bytes(b)));
  auto longer = a;
  longer.push_back(0);
  CHECK(content_digest(Bytes(a)) != content_digest(Bytes(longer)));
}

TEST_CASE("key: the key id of a fixed key is a fixed known answer") {
  // Computed once from the encoding in docs/cache-key.md. If this fails, the key-id encoding
  // changed: bump k_key_schema_version and update this value deliberately.
  const KeyFields key = sample_key();
  CHECK(to_hex(key.content) == "0d7172d442fa07d1ed9c6afd698e97e18da8f19017c7f9a900b1494dcb5ca70a");
  CHECK(to_hex(key_id(key)) == "bfb51df572614599ec0e72b4ac2f45708589447c6649b27faf94454dd961cd64");
}

TEST_CASE("key: the key id is SHA-256 of the documented length-prefixed encoding") {
  const KeyFields key = sample_key();
  std::vector<std::uint8_t> preimage = {'j', 'i', 't', 'c', 'a', 'c', 'h', 'e', '-', 'k', 'e', 'y', 0};
  preimage.push_back(static_cast<std::uint8_t>(key.key_schema));
  preimage.push_back(static_cast<std::uint8_t>(key.key_schema >> 8));
  preimage.insert(preimage.end(), key.content.bytes.begin(), key.content.bytes.end());
  put_string(preimage, key.arch);
  put_u32(preimage, key.driver_api);
  put_string(preimage, key.driver_build);
  put_string(preimage, key.options);
  CHECK(key_id(key) == sha256(Bytes(preimage)));
}

TEST_CASE("key: a content digest task gives content_digest's answer, waited for or not") {
  std::vector<std::uint8_t> big(3 * k_content_chunk_size + 1000);
  for (std::size_t i = 0; i < big.size(); ++i) big[i] = static_cast<std::uint8_t>((i * 7 + 3) % 251);
  ContentDigestTask task(Bytes{big});
  CHECK(to_hex(task.wait()) == "596786ed68130a0a1e83840c65fe65c81f3ebeaeea086c7d7c5e5dc813f55949");
  CHECK(task.wait() == content_digest(Bytes(big)));  // a second wait returns the same digest
  ContentDigestTask small(as_bytes("abc"));
  CHECK(to_hex(small.wait()) == "a59144558080930bd8f0845418ea68085a9ed559c43770b5b638937f7a05f997");
  { ContentDigestTask abandoned(Bytes{big}); }  // destroyed without wait(): joins its threads
}

TEST_CASE("key: the fast key id is SHA-256 of the documented encoding, tagged apart from the key id") {
  const KeyFields key = sample_key();
  const FastKey fast = fast_key_of(key, xxh3_128(as_bytes("jitcache known-answer source")));
  CHECK(same_fields_but_content(fast, key));
  std::vector<std::uint8_t> preimage = {'j', 'i', 't', 'c', 'a', 'c', 'h', 'e', '-',
                                        'f', 'a', 's', 't', '-', 'k', 'e', 'y', 0};
  preimage.push_back(static_cast<std::uint8_t>(key.key_schema));
  preimage.push_back(static_cast<std::uint8_t>(key.key_schema >> 8));
  preimage.insert(preimage.end(), fast.content_fast.bytes.begin(), fast.content_fast.bytes.end());
  put_string(preimage, key.arch);
  put_u32(preimage, key.driver_api);
  put_string(preimage, key.driver_build);
  put_string(preimage, key.options);
  CHECK(fast_key_id(fast) == sha256(Bytes(preimage)));
  CHECK(fast_key_id(fast) != key_id(key));
}

TEST_CASE("key: changing any one field of a fast key changes its id, and validation checks each field") {
  const FastKey base = fast_key_of(sample_key(), xxh3_128(as_bytes("source")));
  REQUIRE(validate_fast_key(base).ok());
  std::vector<FastKey> changed(6, base);
  changed[0].key_schema = static_cast<std::uint16_t>(k_key_schema_version + 1);
  changed[1].content_fast = xxh3_128(as_bytes("another source"));
  changed[2].arch = "sm_90";
  changed[3].driver_api = 12080;
  changed[4].driver_build = "580.159.05";
  changed[5].options = "maxrreg=32;" + k_default_options.substr(std::string("maxrreg=0;").size());
  for (const FastKey& fast : changed) CHECK(fast_key_id(fast) != fast_key_id(base));
  CHECK_FALSE(validate_fast_key(changed[0]).ok());
  FastKey zero = base;
  zero.content_fast = Checksum128{};
  CHECK_FALSE(validate_fast_key(zero).ok());
  FastKey bad_arch = base;
  bad_arch.arch = "compute_90";
  CHECK_FALSE(validate_fast_key(bad_arch).ok());
  FastKey bad_options = base;
  bad_options.options = "opt=4";
  CHECK_FALSE(validate_fast_key(bad_options).ok());
  KeyFields other_arch = sample_key();
  other_arch.arch = "sm_90";
  CHECK_FALSE(same_fields_but_content(base, other_arch));
}

TEST_CASE("key: equal fields give equal key ids") { CHECK(key_id(sample_key()) == key_id(sample_key())); }

TEST_CASE("key: changing only the key schema changes the key id") {
  KeyFields changed = sample_key();
  changed.key_schema = static_cast<std::uint16_t>(k_key_schema_version + 1);
  CHECK(key_id(changed) != key_id(sample_key()));
}

TEST_CASE("key: changing only the content changes the key id") {
  KeyFields changed = sample_key();
  changed.content = content_digest(as_bytes("jitcache known-answer source "));
  CHECK(key_id(changed) != key_id(sample_key()));
}

TEST_CASE("key: changing only the arch changes the key id") {
  KeyFields changed = sample_key();
  changed.arch = "sm_90";
  CHECK(key_id(changed) != key_id(sample_key()));
  changed.arch = "sm_100f";
  CHECK(key_id(changed) != key_id(sample_key()));
}

TEST_CASE("key: changing only the driver API version changes the key id") {
  KeyFields changed = sample_key();
  changed.driver_api = 13010;
  CHECK(key_id(changed) != key_id(sample_key()));
}

TEST_CASE("key: changing only the driver build changes the key id") {
  KeyFields changed = sample_key();
  changed.driver_build = "580.159.03";
  CHECK(key_id(changed) != key_id(sample_key()));
}

TEST_CASE("key: changing only the options changes the key id") {
  KeyFields changed = sample_key();
  auto options = canonicalize_option_text("opt=3");
  REQUIRE(options.ok());
  changed.options = *options;
  CHECK(key_id(changed) != key_id(sample_key()));
}

TEST_CASE("key: moving bytes from one string field to the next changes the key id") {
  // Without length prefixes "sm_90a" + "580" and "sm_90" + "a580" would hash alike.
  KeyFields left = sample_key();
  left.arch = "sm_90a";
  left.driver_build = "580";
  left.options = "";
  KeyFields right = left;
  right.arch = "sm_90";
  right.driver_build = "a580";
  CHECK(key_id(left) != key_id(right));

  KeyFields build_heavy = left;
  build_heavy.driver_build = "580x";
  build_heavy.options = "";
  KeyFields options_heavy = left;
  options_heavy.driver_build = "580";
  options_heavy.options = "x";
  CHECK(key_id(build_heavy) != key_id(options_heavy));
}

TEST_CASE("key: a well-formed key passes validation") {
  CHECK(validate_key(sample_key()).ok());
  KeyFields family = sample_key();
  family.arch = "sm_100f";
  family.options = *canonicalize_option_text("opt=0;g=1");
  CHECK(validate_key(family).ok());
}

TEST_CASE("key: validation names a wrong key schema") {
  KeyFields key = sample_key();
  key.key_schema = 0;
  const std::string message = validation_message(key);
  CHECK_THAT(message, Catch::Contains("key_schema 0"));
  CHECK_THAT(message, Catch::Contains("(" + std::to_string(k_key_schema_version) + ")"));
}

TEST_CASE("key: validation refuses content that was never set") {
  KeyFields key = sample_key();
  key.content = Digest256{};
  CHECK_THAT(validation_message(key), Catch::Contains("content"));
}

TEST_CASE("key: validation names a malformed arch and its value") {
  for (const char* arch :
       {"sm_9x", "compute_90", "", "sm_", "sm_9", "sm_090", "sm_90b", "sm_90af", "SM_90", " sm_90"}) {
    KeyFields key = sample_key();
    key.arch = arch;
    INFO("arch " << arch);
    const std::string message = validation_message(key);
    CHECK_THAT(message, Catch::StartsWith("arch \"" + std::string(arch) + "\""));
  }
  KeyFields key = sample_key();
  key.arch = "sm_9x";
  CHECK(validation_message(key) ==
        "arch \"sm_9x\" is not of the form sm_<digits>[a|f] (two or more digits, no leading zero), e.g. sm_90a");
}

TEST_CASE("key: validation refuses an arch over the length limit") {
  KeyFields key = sample_key();
  key.arch = "sm_" + std::string(k_max_arch_length, '9');
  CHECK_THAT(validation_message(key), Catch::Contains("more than 32"));
}

TEST_CASE("key: validation refuses driver API version 0") {
  KeyFields key = sample_key();
  key.driver_api = 0;
  CHECK_THAT(validation_message(key), Catch::StartsWith("driver_api 0"));
}

TEST_CASE("key: validation names a driver build that is empty, too long, or has spaces or control bytes") {
  KeyFields key = sample_key();
  key.driver_build = "";
  CHECK_THAT(validation_message(key), Catch::StartsWith("driver_build is empty"));
  key.driver_build = "580 159";
  CHECK_THAT(validation_message(key), Catch::Contains("driver_build \"580 159\" has a space"));
  key.driver_build = std::string("580\n", 4);
  CHECK_THAT(validation_message(key), Catch::Contains("driver_build \"580\\x0a\""));
  key.driver_build = std::string(k_max_driver_build_length + 1, '5');
  CHECK_THAT(validation_message(key), Catch::Contains("more than 64"));
  key.driver_build = std::string(k_max_driver_build_length, '5');
  CHECK(validate_key(key).ok());
}

TEST_CASE("key: validation accepts only the canonical spelling of the options") {
  KeyFields key = sample_key();
  key.options = "opt=4";
  std::string message = validation_message(key);
  CHECK_THAT(message, Catch::StartsWith("options \"opt=4\" are not in canonical form"));
  CHECK_THAT(message, Catch::Contains(k_default_options.substr(0, 40)));

  key.options = "";
  CHECK_THAT(validation_message(key), Catch::StartsWith("options \"\" are not in canonical form"));

  key.options = k_default_options + ";";
  CHECK_THAT(validation_message(key), Catch::StartsWith("options \""));

  key.options = "opt=9";
  message = validation_message(key);
  CHECK_THAT(message, Catch::StartsWith("options \"opt=9\""));
  CHECK_THAT(message, Catch::Contains("\"opt\""));

  key.options = std::string(k_max_options_length + 1, 'x');
  CHECK_THAT(validation_message(key), Catch::Contains("more than 1024"));
}

TEST_CASE("key: arch strings follow sm_<digits>[a|f]") {
  for (const char* good : {"sm_90", "sm_90a", "sm_100f", "sm_121a", "sm_30", "sm_1000"}) {
    INFO(good);
    CHECK(is_valid_arch(good));
  }
  for (const char* bad : {"sm_9x", "compute_90", "sm_90A", "sm_90F", "sm_9", "sm_09", "sm_a", "sm_90 ", "sm90", ""}) {
    INFO(bad);
    CHECK_FALSE(is_valid_arch(bad));
  }
}

TEST_CASE("key: a driver id parses as API/BUILD") {
  auto id = parse_driver_id("13000/580.159.04");
  REQUIRE(id.ok());
  CHECK(id->api == 13000);
  CHECK(id->build == "580.159.04");

  auto max = parse_driver_id("4294967295/x");
  REQUIRE(max.ok());
  CHECK(max->api == 4294967295u);
}

TEST_CASE("key: a malformed driver id is refused with a message naming the part") {
  struct Case {
    const char* text;
    const char* expected;
  };
  for (const Case& c : {
           Case{"13000", "is not API/BUILD"},
           Case{"", "is not API/BUILD"},
           Case{"/580.159.04", "driver API version \"\""},
           Case{"abc/580.159.04", "driver API version \"abc\""},
           Case{"0/580.159.04", "driver API version \"0\""},
           Case{"-1/580.159.04", "driver API version \"-1\""},
           Case{"+13000/580.159.04", "driver API version \"+13000\""},
           Case{" 13000/580.159.04", "driver API version \" 13000\""},
           Case{"4294967296/580", "driver API version \"4294967296\""},
           Case{"13000/", "driver_build is empty"},
           Case{"13000/580.159.04 ", "has a space"},
           Case{"13000/580 159", "has a space"},
       }) {
    INFO("driver id \"" << c.text << "\"");
    auto id = parse_driver_id(c.text);
    REQUIRE_FALSE(id.ok());
    CHECK(id.error().code == ErrorCode::invalid_argument);
    CHECK_THAT(id.error().message, Catch::Contains(c.expected));
  }
  auto long_build = parse_driver_id("13000/" + std::string(k_max_driver_build_length + 1, '1'));
  REQUIRE_FALSE(long_build.ok());
  CHECK_THAT(long_build.error().message, Catch::Contains("more than 64"));
}

TEST_CASE("key: a canonical option text remembered by the thread does not let another spelling through") {
  // check_options remembers the last canonical text of each thread (proto/key.cpp): a text that
  // only shares a prefix or a length with it must still be canonicalised and refused.
  KeyFields key = sample_key();
  REQUIRE(validate_key(key).ok());
  REQUIRE(validate_key(key).ok());
  const std::string canonical = key.options;
  key.options = canonical + ";";
  CHECK_THAT(validation_message(key), Catch::StartsWith("options \""));
  key.options = canonical;
  key.options.back() = ' ';  // same length, not canonical
  CHECK_FALSE(validate_key(key).ok());
  key.options = canonical;
  CHECK(validate_key(key).ok());
  key.options = "opt=4";
  CHECK_FALSE(validate_key(key).ok());
  key.options = canonical;
  CHECK(validate_key(key).ok());
}
