// The published image file (PROTOCOL.md §8 "Published images"): what jitcached writes into the
// directory beside its socket for a shared entry, so that a client can load a hit without a round
// trip. One file per entry, named by the lowercase hex of its fast key id:
//
//   magic "JCP1" (4 bytes) | format version u16 (2) | pad length u16 | pad (zero bytes)
//   | fast_key | the LOOKUP ok reply payload (entry_info, image blob32)
//
// The pad puts the image at a multiple of k_published_image_alignment from the file's start, so a
// client that maps the file hands the driver an image as aligned as a heap buffer would be (format
// 1, without the pad, is still read).
// The tail is exactly what LOOKUP would send, encoded and decoded by the same codec
// (messages.hpp), so the client runs the same checks on it as on a socket hit. The fast key is in
// the file, not only in its name, so a file renamed or copied under another name is refused.
// Thread safety: free functions.
#pragma once

#include <array>
#include <cstdint>

#include <proto/key.hpp>
#include <proto/messages.hpp>

namespace jitcache::proto {

inline constexpr std::array<std::uint8_t, 4> k_published_magic{0x4A, 0x43, 0x50, 0x31};  // "JCP1"
// Persisted in files clients read: bump on any change of the layout, never reuse a number.
inline constexpr std::uint16_t k_published_format_version = 2;
inline constexpr std::uint16_t k_published_format_unpadded = 1;  // read, no longer written
inline constexpr std::size_t k_published_image_alignment = 64;
// The directory beside the socket: `<socket path>` + this.
inline constexpr char k_published_dir_suffix[] = ".published";

struct PublishedImage {
  FastKey fast_key;
  LookupReply reply;  // reply.image views the decoded bytes
};

// The file's bytes for an entry and its image (the image is copied in after the head).
Payload encode_published_image(const FastKey& fast_key, const EntryInfo& info, Bytes image);
// Everything before the image bytes: a writer can send head and image without joining them.
Payload encode_published_image_head(const FastKey& fast_key, const EntryInfo& info, std::uint32_t image_size);
// Refuses another magic or format version, a pad that is not zeros, is longer than the alignment or
// does not align the image, and anything the
// LOOKUP reply decoder refuses (ErrorCode::invalid_argument / too_large). Does not check the image against its
// checksum: that is the reader's job, as for a LOOKUP reply.
common::Result<PublishedImage> decode_published_image(Bytes file);

// The published directory of a socket, and the file name of a fast key id in it.
std::string published_dir_for(const std::string& socket_path);
std::string published_file_name(const Digest256& fast_key_id);

}  // namespace jitcache::proto
