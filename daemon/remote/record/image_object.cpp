#include <daemon/remote/record/image_object.hpp>

#include <zstd.h>

#include <memory>
#include <string>

namespace jitcache::daemon::remote {

namespace {

// Rationale: level 3 as the local store's default (daemon/config/compression_level.hpp): an image
// is compressed once by its builder and decompressed by every host that fetches it, and zstd's
// decompression speed hardly depends on the level.
constexpr int k_image_object_level = 3;

// No image is larger than the largest frame a daemon accepts (1 GiB): whatever record or frame
// claims more is refused before anything is allocated, even if the caller's own limit is larger.
constexpr std::uint64_t k_max_image_object_raw_size = 1ull << 30;

struct DecompressContextFree {
  void operator()(ZSTD_DCtx* context) const { ZSTD_freeDCtx(context); }
};

Rejected corrupt(const std::string& message) { return Rejected{Rejection::image_corrupt, "image object " + message}; }
Rejected mismatch(const std::string& message) { return Rejected{Rejection::image_mismatch, "image object " + message}; }

}  // namespace

proto::Digest256 image_digest(proto::Bytes raw) { return proto::sha256(raw); }

std::string encode_image_object(proto::Bytes raw) {
  std::string frame(ZSTD_compressBound(raw.size()), '\0');
  std::unique_ptr<ZSTD_CCtx, decltype(&ZSTD_freeCCtx)> context(ZSTD_createCCtx(), &ZSTD_freeCCtx);
  // The frame records its content size, which decode_image_object checks before allocating; zstd's
  // own checksum is left out, the SHA-256 of the raw image covers more.
  ZSTD_CCtx_setParameter(context.get(), ZSTD_c_compressionLevel, k_image_object_level);
  ZSTD_CCtx_setParameter(context.get(), ZSTD_c_contentSizeFlag, 1);
  ZSTD_CCtx_setParameter(context.get(), ZSTD_c_checksumFlag, 0);
  const std::size_t written = ZSTD_compress2(context.get(), frame.data(), frame.size(), raw.data(), raw.size());
  // ZSTD_compressBound is enough room by zstd's contract, so only a failed allocation inside zstd
  // ends here; an empty object is one no record can name (object_size is never 0).
  if (ZSTD_isError(written) != 0) return {};
  frame.resize(written);
  return frame;
}

std::variant<std::vector<std::uint8_t>, Rejected> decode_image_object(std::string_view object,
                                                                      const IndexRecord& record) {
  // The frame is read for its header first: its structure (one whole frame, nothing after it) and
  // what it says it holds, before a byte is allocated for the image.
  const unsigned long long content_size = ZSTD_getFrameContentSize(object.data(), object.size());
  if (content_size == ZSTD_CONTENTSIZE_ERROR) return corrupt("is not a zstd frame");
  if (content_size == ZSTD_CONTENTSIZE_UNKNOWN) return corrupt("is a zstd frame that does not record its size");
  const std::size_t frame_size = ZSTD_findFrameCompressedSize(object.data(), object.size());
  if (ZSTD_isError(frame_size) != 0) {
    return corrupt("is a truncated or damaged zstd frame (" + std::string(ZSTD_getErrorName(frame_size)) + ")");
  }
  if (frame_size != object.size()) {
    return corrupt("has " + std::to_string(object.size() - frame_size) + " bytes after its zstd frame");
  }
  if (content_size != record.image_size) {
    return mismatch("holds " + std::to_string(content_size) + " bytes; the index record says " +
                    std::to_string(record.image_size));
  }
  if (object.size() != record.object_size) {
    return mismatch("has " + std::to_string(object.size()) + " bytes; the index record says " +
                    std::to_string(record.object_size));
  }
  if (record.image_size > k_max_image_object_raw_size) {
    return Rejected{Rejection::image_too_large, "image object holds " + std::to_string(record.image_size) +
                                                    " bytes, over the 1 GiB any image may have"};
  }

  std::unique_ptr<ZSTD_DCtx, DecompressContextFree> context(ZSTD_createDCtx());
  if (!context) return corrupt("cannot be decompressed: no memory for a zstd context");
  std::vector<std::uint8_t> image(static_cast<std::size_t>(record.image_size));
  // The output buffer is exactly image_size bytes and zstd never writes past it, so a frame whose
  // blocks hold more than its header said fails here rather than growing anything.
  const std::size_t written =
      ZSTD_decompressDCtx(context.get(), image.data(), image.size(), object.data(), object.size());
  if (ZSTD_isError(written) != 0) {
    return corrupt("does not decompress: " + std::string(ZSTD_getErrorName(written)));
  }
  if (written != image.size()) {
    return corrupt("decompressed to " + std::to_string(written) + " bytes; its frame header says " +
                   std::to_string(image.size()));
  }
  if (image_digest(proto::Bytes(image)) != record.image_digest) {
    return mismatch("decompresses to an image whose SHA-256 is not the index record's");
  }
  return image;
}

}  // namespace jitcache::daemon::remote
