#include <daemon/store/image_codec.hpp>

#include <zstd.h>

#include <utility>

namespace jitcache::daemon::store {

namespace {

// Rationale: no image can be larger than the largest frame the daemon accepts (max_frame_bytes is
// at most 1 GiB), so a raw_size above that is a damaged row; refusing it before allocating keeps a
// flipped bit in raw_size from turning into an allocation of petabytes.
constexpr std::uint64_t k_max_raw_size = 1ull << 30;

}  // namespace

bool is_known_codec(std::uint8_t codec) {
  return codec == static_cast<std::uint8_t>(Codec::raw) || codec == static_cast<std::uint8_t>(Codec::zstd);
}

EncodedImage encode_image(proto::Bytes raw, int level) {
  EncodedImage out;
  if (level <= 0 || raw.empty()) return out;
  const std::size_t bound = ZSTD_compressBound(raw.size());
  ImageBuffer frame(bound);
  ZSTD_CCtx* context = ZSTD_createCCtx();
  if (context == nullptr) return out;
  // The frame records the content size (the default for a one-shot compress, stated here because
  // decode_image relies on it) and a checksum of its own is left out: the store's XXH3-128 over
  // the raw bytes already covers them.
  ZSTD_CCtx_setParameter(context, ZSTD_c_compressionLevel, level);
  ZSTD_CCtx_setParameter(context, ZSTD_c_contentSizeFlag, 1);
  ZSTD_CCtx_setParameter(context, ZSTD_c_checksumFlag, 0);
  const std::size_t written = ZSTD_compress2(context, frame.data(), frame.size(), raw.data(), raw.size());
  ZSTD_freeCCtx(context);
  if (ZSTD_isError(written) || written >= raw.size()) return out;
  frame.resize(written);
  frame.shrink_to_fit();
  out.codec = Codec::zstd;
  out.compressed = std::move(frame);
  return out;
}

std::variant<ImageBuffer, DecodeFailure> decode_image(std::uint8_t codec, ImageBuffer stored, std::uint64_t raw_size) {
  if (codec == static_cast<std::uint8_t>(Codec::raw)) {
    if (stored.size() != raw_size) {
      return DecodeFailure{false, "its raw image has " + std::to_string(stored.size()) + " bytes, the entry says " +
                                      std::to_string(raw_size)};
    }
    return stored;
  }
  if (codec != static_cast<std::uint8_t>(Codec::zstd)) {
    return DecodeFailure{true, "codec " + std::to_string(codec) + " is unknown to this jitcached"};
  }
  if (raw_size > k_max_raw_size) {
    return DecodeFailure{false, "the entry claims " + std::to_string(raw_size) + " raw bytes"};
  }
  const unsigned long long frame_size = ZSTD_getFrameContentSize(stored.data(), stored.size());
  if (frame_size == ZSTD_CONTENTSIZE_ERROR || frame_size == ZSTD_CONTENTSIZE_UNKNOWN) {
    return DecodeFailure{false, "its blob is not a zstd frame with a content size"};
  }
  if (frame_size != raw_size) {
    return DecodeFailure{false, "its zstd frame holds " + std::to_string(frame_size) + " bytes, the entry says " +
                                    std::to_string(raw_size)};
  }
  ImageBuffer image(static_cast<std::size_t>(raw_size));
  // ZSTD_decompress never writes past the capacity it is given, so a frame that lies about its
  // size fails here instead of overrunning the buffer.
  const std::size_t written = ZSTD_decompress(image.data(), image.size(), stored.data(), stored.size());
  if (ZSTD_isError(written)) {
    return DecodeFailure{false, std::string("its zstd frame does not decompress: ") + ZSTD_getErrorName(written)};
  }
  if (written != raw_size) {
    return DecodeFailure{false, "its zstd frame decompressed to " + std::to_string(written) +
                                    " bytes, the entry says " + std::to_string(raw_size)};
  }
  return image;
}

}  // namespace jitcache::daemon::store
