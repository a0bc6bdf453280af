// The index record: what a remote holds under a key id (space "idx") and under the fast key id
// (space "fk"), signed by the host that compiled the entry (docs/remote-layout.md "Index record").
// It binds the whole key, the fast key's content, the image's SHA-256 and sizes, the producer and
// the signer together under one ed25519 signature, so a remote (or anyone who can write to it) can
// withhold or damage entries but cannot make a daemon serve an image no trusted builder compiled
// for exactly that key.
// Thread safety: plain values and pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <variant>

#include <proto/digest.hpp>
#include <proto/key.hpp>
#include <proto/signing.hpp>

#include <daemon/remote/record/rejection.hpp>
#include <daemon/remote/record/trusted_keys.hpp>

namespace jitcache::daemon::remote {

struct IndexRecord {
  proto::KeyFields key;
  proto::Checksum128 content_fast;  // the fast key's content (PUT's content_fast)
  proto::Digest256 image_digest;    // SHA-256 of the raw image: its name in space "img"
  std::uint64_t image_size = 0;     // raw bytes
  std::uint64_t object_size = 0;    // bytes of the "img" object (the zstd frame)
  std::string producer;             // "nvJitLink 13.0" (printable, <= 64)
  std::uint64_t compile_time_us = 0;
  std::int64_t created_at_ms = 0;  // Unix time at the signing host
  std::string host;                // the signing host's name, for logs (printable, <= 64)
  proto::SignerId signer{};        // set by encode_signed_record
};

// The record's bytes, signed with `key` (record.signer is taken from the key).
std::string encode_signed_record(const IndexRecord& record, const proto::SigningKey& key);

// What a lookup asked for: the record must name exactly this key id (space "idx") or fast key id
// (space "fk").
struct ExpectedKey {
  enum class Kind : std::uint8_t { key_id, fast_key_id } kind = Kind::key_id;
  proto::Digest256 id;
};

// Parses `bytes` and checks them: signed by a key in `trusted` (unknown_signer otherwise), the
// signature valid (bad_signature), the key fields valid and hashing to `expected`
// (key_mismatch), sizes within `max_image_bytes` (image_too_large). Never reads past `bytes`.
std::variant<IndexRecord, Rejected> verify_record(std::string_view bytes, const TrustedKeys& trusted,
                                                  const ExpectedKey& expected, std::uint64_t max_image_bytes);

}  // namespace jitcache::daemon::remote
