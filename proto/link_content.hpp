// The content field of a link session's key (docs/cache-key.md "Link sessions"): one digest over the
// ordered inputs of a cuLink* or nvJitLink session, so that the key names exactly the inputs the
// linker was given.
//
//   content = SHA-256( "jitcache-link" 0x00  ||  u32 count
//                      || for each input, in the order added:
//                           u8 kind || u64 size || content_digest(bytes) (32 bytes)
//                           || u32 len(options) || options )
//
// and the fast key's content, `content_fast`, is the XXH3-128 of the same encoding under the tag
// "jitcache-link-fast" 0x00 with each input's XXH3-128 (16 bytes) in place of its content digest.
// Integers are little-endian. The per-input digest is content_digest.hpp's (chunked SHA-256), so the
// whole is collision-resistant as long as SHA-256 is; the tags keep a link's content from ever
// equalling a module's (content_digest's tag is "jitcache-content"). An input's name is not encoded:
// it changes only the linker's messages, never the image (docs/cache-key.md says how that was checked).
// Thread safety: free functions (content_digest may hash on short-lived threads of its own).
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string_view>

#include <proto/digest.hpp>
#include <proto/named_values.hpp>

namespace jitcache::proto {

// What an input is, as both linkers name it (CUjitInputType and nvJitLinkInputType number them
// differently). Part of the content encoding and of COMPILE's link inputs: numbered explicitly,
// never renumbered or reused.
enum class LinkInputKind : std::uint8_t { ptx = 1, cubin = 2, fatbinary = 3, object = 4, library = 5, ltoir = 6 };
inline constexpr std::array<NamedValue<LinkInputKind>, 6> k_link_input_kinds{{
    {LinkInputKind::ptx, "ptx"},
    {LinkInputKind::cubin, "cubin"},
    {LinkInputKind::fatbinary, "fatbinary"},
    {LinkInputKind::object, "object"},
    {LinkInputKind::library, "library"},
    {LinkInputKind::ltoir, "ltoir"},
}};
bool is_link_input_kind(std::uint8_t value);

// One input as the key sees it. `options` is the input's own canonical option string (cuLinkAddData's
// option array, jit_options.hpp); empty for nvJitLink, whose inputs take none.
struct LinkInputView {
  LinkInputKind kind = LinkInputKind::ptx;
  Bytes data;
  std::string_view options;
};

Digest256 link_content_digest(std::span<const LinkInputView> inputs);
Checksum128 link_content_fast(std::span<const LinkInputView> inputs);

}  // namespace jitcache::proto
