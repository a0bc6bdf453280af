#include <daemon/remote/record/index_record.hpp>

#include <string>
#include <utility>

#include <daemon/remote/record/index_record_codec.hpp>

namespace jitcache::daemon::remote {

namespace {

std::string short_hex(const proto::Digest256& id) { return proto::to_hex(id).substr(0, 16); }

std::string_view space_of(ExpectedKey::Kind kind) { return kind == ExpectedKey::Kind::key_id ? "idx" : "fk"; }

}  // namespace

std::string encode_signed_record(const IndexRecord& record, const proto::SigningKey& key) {
  IndexRecord signed_record = record;
  signed_record.signer = key.public_key().id();
  std::string bytes = encode_record_body(signed_record);
  const proto::Signature signature = key.sign(record_signed_message(bytes));
  bytes.append(reinterpret_cast<const char*>(signature.data()), signature.size());
  return bytes;
}

std::variant<IndexRecord, Rejected> verify_record(std::string_view bytes, const TrustedKeys& trusted,
                                                  const ExpectedKey& expected, std::uint64_t max_image_bytes) {
  auto parsed = parse_index_record(bytes);
  if (auto* rejected = std::get_if<Rejected>(&parsed)) return std::move(*rejected);
  ParsedIndexRecord& p = std::get<ParsedIndexRecord>(parsed);
  IndexRecord& record = p.record;

  const proto::PublicKey* signer = trusted.find(record.signer);
  if (signer == nullptr) {
    return Rejected{Rejection::unknown_signer, "index record signed by " + proto::signer_hex(record.signer) +
                                                   " (host " + record.host + "), a key not in remote_trusted_keys"};
  }
  if (!signer->verifies(record_signed_message(p.body), p.signature)) {
    return Rejected{Rejection::bad_signature,
                    "index record's signature does not verify under its signer " + proto::signer_hex(record.signer)};
  }

  // Only now is anything of the record believed: a trusted builder made it. What remains is
  // whether it answers the question asked (a valid record replayed under another id does not).
  if (auto valid = proto::validate_key(record.key); !valid) {
    return Rejected{Rejection::key_mismatch, "index record's key is not valid: " + valid.error().message};
  }
  const proto::FastKey fast = proto::fast_key_of(record.key, record.content_fast);
  if (auto valid = proto::validate_fast_key(fast); !valid) {
    return Rejected{Rejection::key_mismatch, "index record's fast key is not valid: " + valid.error().message};
  }
  const proto::Digest256 id =
      expected.kind == ExpectedKey::Kind::key_id ? proto::key_id(record.key) : proto::fast_key_id(fast);
  if (id != expected.id) {
    return Rejected{Rejection::key_mismatch, "index record under " + std::string(space_of(expected.kind)) + " " +
                                                 short_hex(expected.id) + " is for " + short_hex(id)};
  }

  if (record.image_size > max_image_bytes || record.object_size > max_image_bytes) {
    return Rejected{Rejection::image_too_large, "index record names an image of " + std::to_string(record.image_size) +
                                                    " bytes (" + std::to_string(record.object_size) +
                                                    " compressed); remote_max_image is " +
                                                    std::to_string(max_image_bytes)};
  }
  return std::move(record);
}

}  // namespace jitcache::daemon::remote
