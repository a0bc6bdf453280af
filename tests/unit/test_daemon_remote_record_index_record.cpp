// The signed index record (daemon/remote/record/index_record.hpp, index_record_codec.hpp,
// docs/remote-layout.md "Index record", "Checks on read"): what a builder signs, a daemon accepts;
// each way of tampering with it is refused for its own reason, and the checks run in their order.
#include <catch2/catch.hpp>

#include <cstdint>
#include <string>
#include <variant>

#include <proto/key.hpp>
#include <proto/signing.hpp>

#include <daemon/remote/record/index_record.hpp>
#include <daemon/remote/record/index_record_codec.hpp>

#include <tests/support/remote_records.hpp>

using namespace jitcache;
using namespace jitcache::daemon::remote;
using namespace jitcache::testing;

namespace {

constexpr std::uint64_t k_max_image = 64ull << 20;  // remote_max_image of these tests: 64 MiB

struct Fleet {
  proto::SigningKey builder = proto::SigningKey::generate();
  proto::SigningKey outsider = proto::SigningKey::generate();  // never trusted
  TrustedKeys trusted = trusting({&builder});
};

Fleet& fleet() {
  static Fleet f;
  return f;
}

std::variant<IndexRecord, Rejected> verify(std::string_view bytes, const ExpectedKey& expected,
                                           std::uint64_t max_image = k_max_image) {
  return verify_record(bytes, fleet().trusted, expected, max_image);
}

// The reason `bytes` is refused under `expected`, or "accepted".
std::string outcome(std::string_view bytes, const ExpectedKey& expected, std::uint64_t max_image = k_max_image) {
  const auto result = verify(bytes, expected, max_image);
  if (const auto* rejected = std::get_if<Rejected>(&result)) return std::string(rejection_name(rejected->reason));
  return "accepted";
}

bool contains_text(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

std::string rejection_message(std::string_view bytes, const ExpectedKey& expected) {
  const auto result = verify(bytes, expected);
  REQUIRE(std::holds_alternative<Rejected>(result));
  return std::get<Rejected>(result).message;
}

}  // namespace

TEST_CASE("index record: a record a trusted builder signed is accepted under its key id and its fast key id") {
  const RemoteEntry entry = sample_remote_entry(1);
  const std::string bytes = signed_record(entry, fleet().builder);

  for (const ExpectedKey& expected : {entry.expect_key_id(), entry.expect_fast_key_id()}) {
    const auto result = verify(bytes, expected);
    REQUIRE(std::holds_alternative<IndexRecord>(result));
    const IndexRecord& got = std::get<IndexRecord>(result);
    CHECK(got.key == entry.record.key);
    CHECK(got.content_fast == entry.record.content_fast);
    CHECK(got.image_digest == entry.record.image_digest);
    CHECK(got.image_size == entry.record.image_size);
    CHECK(got.object_size == entry.record.object_size);
    CHECK(got.producer == entry.record.producer);
    CHECK(got.compile_time_us == entry.record.compile_time_us);
    CHECK(got.created_at_ms == entry.record.created_at_ms);
    CHECK(got.host == entry.record.host);
    CHECK(got.signer == fleet().builder.public_key().id());
  }
}

TEST_CASE("index record: the bytes start with JCIR and version 1 and end with the signer id and the signature") {
  const RemoteEntry entry = sample_remote_entry(2);
  const std::string bytes = signed_record(entry, fleet().builder);
  CHECK(bytes.substr(0, 6) == std::string("JCIR\x01\x00", 6));
  const proto::SignerId id = fleet().builder.public_key().id();
  CHECK(bytes.substr(bytes.size() - 72, 8) == std::string(id.begin(), id.end()));
  // The signature covers the domain string and every byte before the signature.
  const std::string body = bytes.substr(0, bytes.size() - 64);
  CHECK(fleet().builder.public_key().verifies(std::string(k_index_record_domain) + body, signature_of(bytes)));
  CHECK_FALSE(fleet().builder.public_key().verifies(body, signature_of(bytes)));
  CHECK(k_index_record_domain.size() == 32);
  CHECK(k_index_record_domain.back() == '\0');
}

TEST_CASE("index record: each tampering is refused for its own reason") {
  Fleet& f = fleet();
  const RemoteEntry entry = sample_remote_entry(3);
  const RemoteEntry other = sample_remote_entry(4);
  const std::string bytes = signed_record(entry, f.builder);
  const std::string other_bytes = signed_record(other, f.builder);
  REQUIRE(outcome(bytes, entry.expect_key_id()) == "accepted");

  SECTION("a bit flipped in the signature: bad_signature") {
    CHECK(outcome(flip_bit(bytes, (bytes.size() - 10) * 8 + 3), entry.expect_key_id()) == "bad_signature");
  }
  SECTION("a bit flipped in a signed field: bad_signature") {
    // Byte 20 is inside the content digest (bytes 8 to 39); the producer's last character is a
    // digit whose lowest bit flipped is another.
    CHECK(outcome(flip_bit(bytes, 20 * 8), entry.expect_key_id()) == "bad_signature");
    const std::size_t producer_end = bytes.find("nvJitLink 13.0") + 13;
    CHECK(outcome(flip_bit(bytes, producer_end * 8), entry.expect_key_id()) == "bad_signature");
  }
  SECTION("signed by a key not in remote_trusted_keys: unknown_signer") {
    CHECK(outcome(signed_record(entry, f.outsider), entry.expect_key_id()) == "unknown_signer");
    CHECK(outcome(resign_record(bytes, f.outsider), entry.expect_key_id()) == "unknown_signer");
  }
  SECTION("the signer id changed to a trusted key's, the outsider's signature kept: bad_signature") {
    const std::string forged = with_fields_of(entry.record, signed_record(entry, f.outsider));
    std::string claimed = forged;
    const proto::SignerId id = f.builder.public_key().id();
    claimed.replace(claimed.size() - 72, 8, std::string(id.begin(), id.end()));
    CHECK(outcome(claimed, entry.expect_key_id()) == "bad_signature");
  }
  SECTION("another entry's key fields under this record's signature: bad_signature") {
    IndexRecord swapped = entry.record;
    swapped.key = other.record.key;
    swapped.content_fast = other.record.content_fast;
    // Asked for under the other key's id, whose fields it now carries: only the signature tells.
    CHECK(outcome(with_fields_of(swapped, bytes), other.expect_key_id()) == "bad_signature");
  }
  SECTION("a validly signed record stored under another key id: key_mismatch") {
    CHECK(outcome(bytes, other.expect_key_id()) == "key_mismatch");
    CHECK(outcome(other_bytes, entry.expect_key_id()) == "key_mismatch");
    CHECK(outcome(bytes, other.expect_fast_key_id()) == "key_mismatch");
    CHECK(contains_text(rejection_message(bytes, other.expect_key_id()), "is for"));
  }
  SECTION("a record of space idx replayed in space fk under the same hex id: key_mismatch") {
    const ExpectedKey as_fast{ExpectedKey::Kind::fast_key_id, entry.key_id()};
    CHECK(outcome(bytes, as_fast) == "key_mismatch");
    const ExpectedKey as_full{ExpectedKey::Kind::key_id, entry.fast_key_id()};
    CHECK(outcome(bytes, as_full) == "key_mismatch");
  }
  SECTION("a trusted builder's record for an invalid key: key_mismatch") {
    RemoteEntry bad = entry;
    bad.record.key.arch = "compute_90";
    const std::string bad_bytes = signed_record(bad, f.builder);
    CHECK(outcome(bad_bytes, {ExpectedKey::Kind::key_id, proto::key_id(bad.record.key)}) == "key_mismatch");
    RemoteEntry zero_fast = entry;
    zero_fast.record.content_fast = {};
    CHECK(outcome(signed_record(zero_fast, f.builder), entry.expect_key_id()) == "key_mismatch");
  }
  SECTION("truncated at any length, or with a byte after the signature: malformed_record") {
    for (std::size_t length = 0; length < bytes.size(); ++length) {
      INFO("truncated to " << length << " bytes");
      CHECK(outcome(bytes.substr(0, length), entry.expect_key_id()) == "malformed_record");
    }
    CHECK(outcome(bytes + '\0', entry.expect_key_id()) == "malformed_record");
    CHECK(outcome(bytes + bytes, entry.expect_key_id()) == "malformed_record");
  }
  SECTION("another version or magic: malformed_record") {
    std::string version2 = bytes;
    version2[4] = 2;
    CHECK(outcome(version2, entry.expect_key_id()) == "malformed_record");
    CHECK(contains_text(rejection_message(version2, entry.expect_key_id()), "version 2"));
    std::string magic = bytes;
    magic[0] = 'X';
    CHECK(outcome(magic, entry.expect_key_id()) == "malformed_record");
    CHECK(outcome("", entry.expect_key_id()) == "malformed_record");
  }
  SECTION("sizes over remote_max_image: image_too_large, without allocating what they claim") {
    RemoteEntry huge = entry;
    huge.record.image_size = 4ull << 30;
    CHECK(outcome(signed_record(huge, f.builder), entry.expect_key_id()) == "image_too_large");
    RemoteEntry huge_object = entry;
    huge_object.record.object_size = k_max_image + 1;
    CHECK(outcome(signed_record(huge_object, f.builder), entry.expect_key_id()) == "image_too_large");
    RemoteEntry at_limit = entry;
    at_limit.record.image_size = k_max_image;
    at_limit.record.object_size = k_max_image;
    CHECK(outcome(signed_record(at_limit, f.builder), entry.expect_key_id()) == "accepted");
    CHECK(outcome(bytes, entry.expect_key_id(), entry.record.image_size - 1) == "image_too_large");
  }
}

TEST_CASE("index record: the checks run in order, so a record wrong in several ways is refused by the first") {
  Fleet& f = fleet();
  const RemoteEntry entry = sample_remote_entry(5);
  const RemoteEntry other = sample_remote_entry(6);
  RemoteEntry huge = entry;
  huge.record.image_size = 4ull << 30;
  // Too large, asked for under another id, signed by an outsider, then its signature damaged.
  const std::string outsider_huge = signed_record(huge, f.outsider);
  const std::string trusted_huge = signed_record(huge, f.builder);
  CHECK(outcome(outsider_huge.substr(1), other.expect_key_id()) == "malformed_record");
  CHECK(outcome(outsider_huge, other.expect_key_id()) == "unknown_signer");
  CHECK(outcome(flip_bit(trusted_huge, 100), other.expect_key_id()) == "bad_signature");
  CHECK(outcome(trusted_huge, other.expect_key_id()) == "key_mismatch");
  CHECK(outcome(trusted_huge, entry.expect_key_id()) == "image_too_large");
}

TEST_CASE("index record: the parse refuses over-long and unprintable fields, and zero sizes") {
  Fleet& f = fleet();
  const RemoteEntry entry = sample_remote_entry(7);
  const std::string bytes = signed_record(entry, f.builder);

  // Edited in place, then signed again by the trusted key: only the parse can refuse them.
  const auto edited = [&](std::string_view from, std::string_view to) {
    std::string copy = bytes;
    const std::size_t at = copy.find(from);
    REQUIRE(at != std::string::npos);
    copy.replace(at, from.size(), to);
    return resign_record(copy, f.builder);
  };
  SECTION("a producer with a control character, a NUL or invalid UTF-8") {
    CHECK(outcome(edited("nvJitLink 13.0", "nvJitLink\x1b[31m"), entry.expect_key_id()) == "malformed_record");
    CHECK(outcome(edited("nvJitLink 13.0", std::string("nvJitLink\0"
                                                       "13.0",
                                                       14)),
                  entry.expect_key_id()) == "malformed_record");
    CHECK(outcome(edited("nvJitLink 13.0", "nvJitLink \xff\xfe.0"), entry.expect_key_id()) == "malformed_record");
    CHECK(contains_text(rejection_message(edited("nvJitLink 13.0", "nvJitLink\x1b[31m"), entry.expect_key_id()),
                        "producer"));
  }
  SECTION("a host longer than 64 bytes, its length prefix grown with it") {
    const std::string long_host(65, 'h');
    std::string from(
        "\x09\x00"
        "builder-1",
        11);
    std::string to = std::string("\x41\x00", 2) + long_host;
    CHECK(outcome(edited(from, to), entry.expect_key_id()) == "malformed_record");
    std::string fits = std::string("\x40\x00", 2) + std::string(64, 'h');
    CHECK(outcome(edited(from, fits), entry.expect_key_id()) == "accepted");
  }
  SECTION("an image_size of 0") {
    RemoteEntry empty = entry;
    empty.record.image_size = 0;
    CHECK(outcome(signed_record(empty, f.builder), entry.expect_key_id()) == "malformed_record");
  }
}

TEST_CASE("index record: encoding cuts an over-long producer or host at a character and replaces what is unprintable") {
  RemoteEntry entry = sample_remote_entry(8);
  entry.record.producer = std::string(63, 'p') + "\xc3\xa9";  // 65 bytes, the last character two of them
  entry.record.host = "host\x1b[2Jname";
  const auto result = verify(signed_record(entry, fleet().builder), entry.expect_key_id());
  REQUIRE(std::holds_alternative<IndexRecord>(result));
  CHECK(std::get<IndexRecord>(result).producer == std::string(63, 'p'));
  CHECK(std::get<IndexRecord>(result).host == "host?[2Jname");
}

TEST_CASE("index record: the longest record version 1 can hold fits k_max_index_record_bytes exactly") {
  RemoteEntry entry = sample_remote_entry(9);
  entry.record.key.arch = std::string(proto::k_max_arch_length, 'a');
  entry.record.key.driver_build = std::string(proto::k_max_driver_build_length, 'b');
  entry.record.key.options = std::string(proto::k_max_options_length, 'o');
  entry.record.producer = std::string(k_max_record_text_length, 'p');
  entry.record.host = std::string(k_max_record_text_length, 'h');
  const std::string bytes = signed_record(entry, fleet().builder);
  CHECK(bytes.size() == k_max_index_record_bytes);
  // It parses (and is then refused for its invalid key, not for its length).
  CHECK(outcome(bytes, entry.expect_key_id()) == "key_mismatch");
  CHECK(outcome(bytes + 'x', entry.expect_key_id()) == "malformed_record");
}

TEST_CASE("index record: with two trusted keys both builders' records are accepted, and a retired key's are not") {
  Fleet& f = fleet();
  const proto::SigningKey next = proto::SigningKey::generate();
  const RemoteEntry entry = sample_remote_entry(10);
  const std::string old_record = signed_record(entry, f.builder);
  const std::string new_record = signed_record(entry, next);

  const TrustedKeys both = trusting({&f.builder, &next});
  CHECK(std::holds_alternative<IndexRecord>(verify_record(old_record, both, entry.expect_key_id(), k_max_image)));
  CHECK(std::holds_alternative<IndexRecord>(verify_record(new_record, both, entry.expect_key_id(), k_max_image)));

  const TrustedKeys retired = trusting({&next});
  const auto refused = verify_record(old_record, retired, entry.expect_key_id(), k_max_image);
  REQUIRE(std::holds_alternative<Rejected>(refused));
  CHECK(std::get<Rejected>(refused).reason == Rejection::unknown_signer);
  CHECK(contains_text(std::get<Rejected>(refused).message, proto::signer_hex(f.builder.public_key().id())));
  CHECK(std::holds_alternative<IndexRecord>(verify_record(new_record, retired, entry.expect_key_id(), k_max_image)));

  const auto none = verify_record(new_record, TrustedKeys{}, entry.expect_key_id(), k_max_image);
  REQUIRE(std::holds_alternative<Rejected>(none));
  CHECK(std::get<Rejected>(none).reason == Rejection::unknown_signer);
}
