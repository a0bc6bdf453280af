// Entries of the fleet tier's remote as tests need them (docs/remote-layout.md): a valid entry for a
// seed (its image, its "img" object and its index record's fields), signed records, and the
// tamperings that each make verify_record or decode_image_object refuse for one reason
// (daemon/remote/record/rejection.hpp). Integration tests write these bytes into a real remote;
// unit tests feed them to the checks directly.
//
// Record bytes are std::string, as a backend stores them. A record ends with its signer id
// (k_signer_bytes) and its signature (k_signature_bytes); everything before the signature is
// what the signature covers (after k_index_record_domain).
// Thread safety: pure functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <proto/digest.hpp>
#include <proto/key.hpp>
#include <proto/signing.hpp>

#include <daemon/remote/record/image_object.hpp>
#include <daemon/remote/record/index_record.hpp>
#include <daemon/remote/record/index_record_codec.hpp>
#include <daemon/remote/record/trusted_keys.hpp>

#include <tests/support/sample_entries.hpp>

namespace jitcache::testing {

struct RemoteEntry {
  std::vector<std::uint8_t> image;
  std::string object;                  // "img" value: encode_image_object(image)
  daemon::remote::IndexRecord record;  // record.signer is set by whoever signs it

  proto::Digest256 key_id() const { return proto::key_id(record.key); }
  proto::Digest256 fast_key_id() const {
    return proto::fast_key_id(proto::fast_key_of(record.key, record.content_fast));
  }
  // The ids of its values in spaces "idx", "fk" and "img".
  std::string idx_id() const { return proto::to_hex(key_id()); }
  std::string fk_id() const { return proto::to_hex(fast_key_id()); }
  std::string img_id() const { return proto::to_hex(record.image_digest); }

  daemon::remote::ExpectedKey expect_key_id() const { return {daemon::remote::ExpectedKey::Kind::key_id, key_id()}; }
  daemon::remote::ExpectedKey expect_fast_key_id() const {
    return {daemon::remote::ExpectedKey::Kind::fast_key_id, fast_key_id()};
  }
};

// sample_key(seed) with an image of sample_image(seed, image_size), as a builder uploads it.
inline RemoteEntry sample_remote_entry(std::uint64_t seed, std::size_t image_size = 4096) {
  RemoteEntry entry;
  entry.image = sample_image(seed, image_size);
  entry.object = daemon::remote::encode_image_object(proto::Bytes(entry.image));
  auto& r = entry.record;
  r.key = sample_key(seed);
  r.content_fast = sample_content_fast(seed);
  r.image_digest = daemon::remote::image_digest(proto::Bytes(entry.image));
  r.image_size = entry.image.size();
  r.object_size = entry.object.size();
  r.producer = "nvJitLink 13.0";
  r.compile_time_us = 25'000;
  r.created_at_ms = 1'700'000'000'000;
  r.host = "builder-1";
  return entry;
}

inline std::string signed_record(const RemoteEntry& entry, const proto::SigningKey& key) {
  return daemon::remote::encode_signed_record(entry.record, key);
}

inline proto::Signature signature_of(std::string_view record_bytes) {
  proto::Signature signature{};
  const std::string_view tail = record_bytes.substr(record_bytes.size() - signature.size());
  for (std::size_t i = 0; i < signature.size(); ++i) signature[i] = static_cast<std::uint8_t>(tail[i]);
  return signature;
}

// `bytes` with bit `bit` (0 = the lowest bit of the first byte) inverted.
inline std::string flip_bit(std::string bytes, std::size_t bit) {
  bytes[bit / 8] = static_cast<char>(static_cast<std::uint8_t>(bytes[bit / 8]) ^ (1u << (bit % 8)));
  return bytes;
}

// The record's bytes for `record` (record.signer as it is) followed by `signature`: a record whose
// fields and signature need not belong together.
inline std::string record_with_signature(const daemon::remote::IndexRecord& record, const proto::Signature& signature) {
  std::string bytes = daemon::remote::encode_record_body(record);
  bytes.append(reinterpret_cast<const char*>(signature.data()), signature.size());
  return bytes;
}

// The fields of `fields` under the signer id and signature of `signed_bytes` (fields swapped
// between two records: bad_signature).
inline std::string with_fields_of(daemon::remote::IndexRecord fields, std::string_view signed_bytes) {
  const std::size_t tail = daemon::remote::k_signer_bytes + daemon::remote::k_signature_bytes;
  const std::string_view signer = signed_bytes.substr(signed_bytes.size() - tail, daemon::remote::k_signer_bytes);
  for (std::size_t i = 0; i < fields.signer.size(); ++i) fields.signer[i] = static_cast<std::uint8_t>(signer[i]);
  return record_with_signature(fields, signature_of(signed_bytes));
}

// `record_bytes` with its signer id and signature replaced by `key`'s: the same bytes before them,
// signed again (whatever they hold: a record edited after signing passes the signature check
// once re-signed with a trusted key, and meets the checks after it).
inline std::string resign_record(std::string_view record_bytes, const proto::SigningKey& key) {
  const std::size_t tail = daemon::remote::k_signer_bytes + daemon::remote::k_signature_bytes;
  std::string body(record_bytes.substr(0, record_bytes.size() - tail));
  const proto::SignerId signer = key.public_key().id();
  body.append(reinterpret_cast<const char*>(signer.data()), signer.size());
  const proto::Signature signature = key.sign(daemon::remote::record_signed_message(body));
  body.append(reinterpret_cast<const char*>(signature.data()), signature.size());
  return body;
}

// Keys the tests trust, or not.
inline daemon::remote::TrustedKeys trusting(const std::vector<const proto::SigningKey*>& keys) {
  std::vector<proto::PublicKey> public_keys;
  public_keys.reserve(keys.size());
  for (const auto* key : keys) public_keys.push_back(key->public_key());
  return daemon::remote::TrustedKeys(std::move(public_keys));
}

}  // namespace jitcache::testing
