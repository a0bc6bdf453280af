// ImageCodec: how an image's bytes are kept in the blobs table (entries.codec, docs/entry-format.md):
// raw, or one zstd frame. The store encodes before it takes its writer lock and decodes after its
// read transaction ends, so neither holds a connection while compressing.
//
// A decoded image is only the candidate the store then checks against the entry's XXH3-128, which
// always covers the raw bytes: decoding proves the frame is well formed and has raw_size bytes,
// the checksum proves they are the bytes that were stored.
//
// Thread safety: free functions; each call uses its own zstd context.
#pragma once

#include <cstdint>
#include <string>
#include <variant>

#include <proto/byte_io.hpp>

#include <daemon/config/compression_level.hpp>
#include <daemon/store/image_buffer.hpp>

namespace jitcache::daemon::store {

// Persisted in entries.codec: numbered explicitly, never renumbered or reused.
enum class Codec : std::uint8_t {
  raw = 0,   // the image as given
  zstd = 1,  // one zstd frame that records its content size (raw_size)
};

struct EncodedImage {
  Codec codec = Codec::raw;
  ImageBuffer compressed;  // the zstd frame; empty for raw (the caller keeps the raw bytes)
};

// Compresses at `level` (0: raw). Falls back to raw when compressing does not save at least one
// byte (already compressed or tiny images), or when zstd fails, so a PUT never fails on its account.
EncodedImage encode_image(proto::Bytes raw, int level);

// The raw image of a stored blob, exactly `raw_size` bytes, or why the blob is damaged: a frame
// that does not decode, holds another size, or a codec this code does not know (the caller decides
// whether that is corrupt or only unsupported).
struct DecodeFailure {
  bool unknown_codec = false;
  std::string reason;
};
std::variant<ImageBuffer, DecodeFailure> decode_image(std::uint8_t codec, ImageBuffer stored, std::uint64_t raw_size);

bool is_known_codec(std::uint8_t codec);

}  // namespace jitcache::daemon::store
