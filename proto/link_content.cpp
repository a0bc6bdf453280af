#include <proto/link_content.hpp>

#include <vector>

#include <proto/byte_io.hpp>
#include <proto/content_digest.hpp>

namespace jitcache::proto {

namespace {

// Rationale: the tags keep a link's content apart from every other digest the project computes
// (content_digest's "jitcache-content", the key id's "jitcache-key"); the NUL ends each one.
constexpr std::string_view k_link_tag{"jitcache-link\0", 14};
constexpr std::string_view k_link_fast_tag{"jitcache-link-fast\0", 19};

// The encoding of docs/cache-key.md "Link sessions" with each input's digest given by `digest_of`.
template <class DigestOf>
std::vector<std::uint8_t> encode(std::string_view tag, std::span<const LinkInputView> inputs, DigestOf digest_of) {
  std::vector<std::uint8_t> bytes;
  ByteWriter out(bytes);
  out.raw(as_bytes(tag));
  out.u32(static_cast<std::uint32_t>(inputs.size()));
  for (const LinkInputView& input : inputs) {
    out.u8(static_cast<std::uint8_t>(input.kind));
    out.u64(input.data.size());
    digest_of(out, input.data);
    out.u32(static_cast<std::uint32_t>(input.options.size()));
    out.raw(as_bytes(input.options));
  }
  return bytes;
}

}  // namespace

bool is_link_input_kind(std::uint8_t value) {
  for (const auto& row : k_link_input_kinds) {
    if (static_cast<std::uint8_t>(row.value) == value) return true;
  }
  return false;
}

Digest256 link_content_digest(std::span<const LinkInputView> inputs) {
  const auto preimage =
      encode(k_link_tag, inputs, [](ByteWriter& out, Bytes data) { out.digest(content_digest(data)); });
  return sha256(Bytes(preimage));
}

Checksum128 link_content_fast(std::span<const LinkInputView> inputs) {
  const auto preimage =
      encode(k_link_fast_tag, inputs, [](ByteWriter& out, Bytes data) { out.checksum(xxh3_128(data)); });
  return xxh3_128(Bytes(preimage));
}

}  // namespace jitcache::proto
