// libFuzzer target: what the remote tier checks before it serves anything a remote returned
// (docs/remote-layout.md "Checks on read"): verify_record over an index record, decode_image_object
// over an image object. Input: byte 0 chooses.
//   bit 0 clear: the rest is an index record, verified as it is and then re-signed with the
//                fuzzer's own trusted key (its last 72 bytes replaced by that key's signer id and
//                signature), so that mutations get past the signature to the key and size checks;
//                bit 1 picks the space asked for ("idx" or "fk").
//   bit 0 set:   bytes 1..8 are an image_size (u64 LE, below 2 MiB after a modulo), the rest an
//                image object, decoded under a record of that size and of the object's length.
//
// Properties checked (abort() on violation, so the fuzzer reports the input):
//   - nothing reads out of bounds, leaks or hits UB (ASan, UBSan, LeakSanitizer);
//   - a record that parses re-encodes to exactly its own bytes (one encoding per record);
//   - an accepted record is signed by the trusted key, names the id it was asked for and sizes
//     within the limit; a record the fuzzer did not sign is never accepted;
//   - a decoded image has the record's size and SHA-256.
#include <daemon/remote/record/image_object.hpp>
#include <daemon/remote/record/index_record.hpp>
#include <daemon/remote/record/index_record_codec.hpp>
#include <proto/key.hpp>
#include <proto/signing.hpp>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

using namespace jitcache;
using namespace jitcache::daemon::remote;

namespace {

constexpr std::uint64_t k_max_image = 1u << 20;

[[noreturn]] void fail(const char* what) {
  std::fprintf(stderr, "fuzz_index_record: property violated: %s\n", what);
  std::abort();
}

struct Keys {
  proto::SigningKey key = proto::SigningKey::generate();
  TrustedKeys trusted{std::vector<proto::PublicKey>{key.public_key()}};
};

const Keys& keys() {
  static const Keys k;
  return k;
}

// The id the record asks to be found under, when it parses (so that the key checks can pass);
// otherwise any id.
ExpectedKey expected_for(std::string_view bytes, bool fast) {
  ExpectedKey expected{fast ? ExpectedKey::Kind::fast_key_id : ExpectedKey::Kind::key_id, {}};
  const auto parsed = parse_index_record(bytes);
  if (const auto* p = std::get_if<ParsedIndexRecord>(&parsed)) {
    if (encode_record_body(p->record) != p->body) fail("a parsed record does not re-encode to its own bytes");
    expected.id = fast ? proto::fast_key_id(proto::fast_key_of(p->record.key, p->record.content_fast))
                       : proto::key_id(p->record.key);
  }
  return expected;
}

void check_accepted(const std::variant<IndexRecord, Rejected>& result, const ExpectedKey& expected) {
  const auto* record = std::get_if<IndexRecord>(&result);
  if (record == nullptr) {
    if (std::get<Rejected>(result).message.empty()) fail("a rejection without a message");
    return;
  }
  if (record->signer != keys().key.public_key().id()) fail("accepted a record of another signer");
  const proto::Digest256 id = expected.kind == ExpectedKey::Kind::key_id
                                  ? proto::key_id(record->key)
                                  : proto::fast_key_id(proto::fast_key_of(record->key, record->content_fast));
  if (id != expected.id) fail("accepted a record for another id");
  if (!proto::validate_key(record->key)) fail("accepted a record with an invalid key");
  if (record->image_size > k_max_image || record->object_size > k_max_image) fail("accepted sizes over the limit");
}

void fuzz_record(std::string_view bytes, bool fast) {
  const ExpectedKey expected = expected_for(bytes, fast);
  const auto as_is = verify_record(bytes, keys().trusted, expected, k_max_image);
  if (std::holds_alternative<IndexRecord>(as_is)) fail("accepted a record the fuzzer did not sign");

  constexpr std::size_t tail = k_signer_bytes + k_signature_bytes;
  if (bytes.size() < tail) return;
  std::string resigned(bytes.substr(0, bytes.size() - tail));
  const proto::SignerId signer = keys().key.public_key().id();
  resigned.append(reinterpret_cast<const char*>(signer.data()), signer.size());
  const proto::Signature signature = keys().key.sign(record_signed_message(resigned));
  resigned.append(reinterpret_cast<const char*>(signature.data()), signature.size());
  check_accepted(verify_record(resigned, keys().trusted, expected_for(resigned, fast), k_max_image),
                 expected_for(resigned, fast));
}

void fuzz_object(std::string_view input) {
  if (input.size() < 8) return;
  std::uint64_t image_size = 0;
  for (int i = 0; i < 8; ++i) image_size |= static_cast<std::uint64_t>(static_cast<std::uint8_t>(input[i])) << (8 * i);
  const std::string_view object = input.substr(8);
  IndexRecord record;
  record.image_size = image_size % (2u << 20);
  record.object_size = object.size();
  record.image_digest = proto::sha256(proto::as_bytes(object));  // a digest the image rarely has
  const auto result = decode_image_object(object, record);
  if (const auto* image = std::get_if<std::vector<std::uint8_t>>(&result)) {
    if (image->size() != record.image_size) fail("decoded an image of another size");
    if (image_digest(proto::Bytes(*image)) != record.image_digest) fail("decoded an image of another digest");
  } else if (std::get<Rejected>(result).message.empty()) {
    fail("a rejection without a message");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  if ((data[0] & 1) == 0) {
    fuzz_record(rest, (data[0] & 2) != 0);
  } else {
    fuzz_object(rest);
  }
  return 0;
}
