// libFuzzer target: the bundle reader (docs/bundle-format.md "What a reader checks") over a file an
// importing daemon cannot trust. Input: byte 0 chooses, the rest is the bundle.
//   bit 0 clear: the bundle is read as it is;
//   bit 0 set:   the bundle is first re-signed with the fuzzer's own key (the header's signer key,
//                the trailer's digest and signature replaced), so that mutations get past the
//                signature to the entries' checks.
//
// Properties checked (abort() on violation, so the fuzzer reports the input):
//   - nothing reads out of bounds, leaks or hits UB (ASan, UBSan, LeakSanitizer), and no entry is
//     allocated beyond the limits;
//   - every entry the reader hands out has a raw image of raw_size bytes whose XXH3-128 is its
//     checksum, within the per-entry limit;
//   - a bundle read to its end has the digest of its bytes before the digest field.
#include <daemon/bundle/bundle_entry.hpp>
#include <daemon/bundle/bundle_reader.hpp>
#include <daemon/bundle/byte_source.hpp>
#include <proto/digest.hpp>
#include <proto/signing.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

using namespace jitcache;
using namespace jitcache::daemon::bundle;

namespace {

constexpr std::uint64_t k_max_entry = 1u << 20;

[[noreturn]] void fail(const char* what) {
  std::fprintf(stderr, "fuzz_bundle_reader: property violated: %s\n", what);
  std::abort();
}

const proto::SigningKey& fuzzer_key() {
  static const proto::SigningKey key = proto::SigningKey::generate();
  return key;
}

// The header's signer key sits after the head, the host (str16), created_at_ms and the count.
void resign(std::vector<std::uint8_t>& bytes) {
  if (bytes.size() < k_head_size + 2 + k_trailer_size) return;
  const std::size_t host_length = bytes[k_head_size] | (bytes[k_head_size + 1] << 8);
  const std::size_t key_at = k_head_size + 2 + host_length + 16;
  if (key_at + 32 > bytes.size() - k_trailer_size + 12) return;
  const auto& raw = fuzzer_key().public_key().raw;
  std::copy(raw.begin(), raw.end(), bytes.begin() + static_cast<std::ptrdiff_t>(key_at));
  const std::size_t digest_at = bytes.size() - 96;
  const proto::Digest256 digest = proto::sha256(proto::Bytes(bytes.data(), digest_at));
  std::copy(digest.bytes.begin(), digest.bytes.end(), bytes.begin() + static_cast<std::ptrdiff_t>(digest_at));
  std::string message(k_signature_context);
  message.append(reinterpret_cast<const char*>(digest.bytes.data()), digest.bytes.size());
  const proto::Signature signature = fuzzer_key().sign(message);
  std::copy(signature.begin(), signature.end(), bytes.end() - 64);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  std::vector<std::uint8_t> bytes(data + 1, data + size);
  if ((data[0] & 1) != 0) resign(bytes);
  ReaderLimits limits;
  limits.max_bundle_bytes = 4u << 20;
  limits.max_entry_bytes = k_max_entry;
  MemorySource source{proto::Bytes(bytes)};
  auto reader = BundleReader::open(source, limits);
  if (!reader) return 0;
  for (;;) {
    auto next = reader->next();
    if (!next) return 0;
    if (!*next) break;
    const ReadEntry& entry = **next;
    if (entry.raw_image().size() != entry.entry.raw_size) fail("an entry's raw image is not raw_size bytes");
    if (entry.entry.raw_size > k_max_entry) fail("an entry over the limit was accepted");
    if (proto::xxh3_128(entry.raw_image()) != entry.entry.checksum) fail("an entry's checksum does not match");
  }
  if (bytes.size() < 96) fail("a bundle shorter than its trailer was read to its end");
  if (proto::sha256(proto::Bytes(bytes.data(), bytes.size() - 96)) != reader->digest()) {
    fail("the digest of a bundle read to its end is not the digest of its bytes");
  }
  return 0;
}
