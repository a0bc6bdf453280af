// The index record's bytes (docs/remote-layout.md "Index record"): version 1 of its encoding, the
// message its signature covers, and the strict parse verify_record starts with. index_record.hpp
// signs and checks; this unit only lays bytes out and reads them back, so that tests and tools can
// also build records the signing path never would (tests/support/remote_records.hpp).
// Thread safety: constants and pure functions.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <variant>

#include <proto/key.hpp>
#include <proto/signing.hpp>

#include <daemon/remote/record/index_record.hpp>
#include <daemon/remote/record/rejection.hpp>

namespace jitcache::daemon::remote {

inline constexpr std::string_view k_index_record_magic = "JCIR";
inline constexpr std::uint16_t k_index_record_version = 1;

// What the signature covers comes after this string, NUL included, so that no other message an
// ed25519 key of the fleet signs (now or later) can be taken for an index record.
inline constexpr std::string_view k_index_record_domain{"jitcache remote index record v1\0", 32};

// The free-text fields' limit (producer, host), in bytes; both must be printable text
// (proto/printable_text.hpp). The key's fields have proto/key.hpp's limits.
inline constexpr std::size_t k_max_record_text_length = 64;

inline constexpr std::size_t k_signer_bytes = std::tuple_size_v<proto::SignerId>;
inline constexpr std::size_t k_signature_bytes = std::tuple_size_v<proto::Signature>;

// The longest record version 1 can encode: a remote's GET of an "idx" or "fk" value asks for no more.
inline constexpr std::size_t k_max_index_record_bytes =
    4 + 2 +  // magic, version
    2 + 32 + (2 + proto::k_max_arch_length) + 4 + (2 + proto::k_max_driver_build_length) +
    (2 + proto::k_max_options_length) +       // the key
    16 + 32 + 8 + 8 +                         // content_fast, image_digest, image_size, object_size
    (2 + k_max_record_text_length) + 8 + 8 +  // producer, compile_time_us, created_at_ms
    (2 + k_max_record_text_length) +          // host
    k_signer_bytes + k_signature_bytes;

// The record's bytes up to the signature, record.signer included: what follows
// k_index_record_domain in the signed message. Never fails: a text field longer than its limit is
// cut to it at a character boundary, and what is not printable text becomes '?', so a compiler
// calling itself anything still makes an encodable record. The key's fields of a key that
// proto::validate_key accepts are written as they are; any other key makes a record that
// verify_record refuses (key_mismatch), never one it cannot parse.
std::string encode_record_body(const IndexRecord& record);

// k_index_record_domain followed by `body`.
std::string record_signed_message(std::string_view body);

struct ParsedIndexRecord {
  IndexRecord record;     // record.signer is the signer id read from the record
  std::string_view body;  // every byte before the signature (a view into the parsed bytes)
  proto::Signature signature;
};

// Reads a whole record: the magic, version 1, every field within its limit, the producer and host
// printable, image_size and object_size non-zero, and nothing after the signature. Anything else
// is malformed_record, with a message naming the field. Checks no signature and no key.
std::variant<ParsedIndexRecord, Rejected> parse_index_record(std::string_view bytes);

}  // namespace jitcache::daemon::remote
