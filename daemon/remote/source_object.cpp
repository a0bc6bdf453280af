#include <daemon/remote/source_object.hpp>

#include <zstd.h>

#include <daemon/remote/record/image_object.hpp>
#include <proto/content_digest.hpp>

namespace jitcache::daemon::remote {

// The same frame as an image object (one zstd frame that records its size): only the check on
// read differs, the content digest instead of a record's SHA-256.
std::string encode_source_object(proto::Bytes source) { return encode_image_object(source); }

std::optional<std::vector<std::uint8_t>> decompress_source(std::string_view object, std::uint64_t max_bytes) {
  const unsigned long long size = ZSTD_getFrameContentSize(object.data(), object.size());
  if (size == ZSTD_CONTENTSIZE_ERROR || size == ZSTD_CONTENTSIZE_UNKNOWN || size > max_bytes) return std::nullopt;
  std::vector<std::uint8_t> source(static_cast<std::size_t>(size));
  const std::size_t got = ZSTD_decompress(source.data(), source.size(), object.data(), object.size());
  if (ZSTD_isError(got) != 0 || got != source.size()) return std::nullopt;
  return source;
}

std::optional<std::vector<std::uint8_t>> decode_source_object(std::string_view object, const proto::Digest256& content,
                                                              std::uint64_t max_bytes) {
  auto source = decompress_source(object, max_bytes);
  if (!source || !(proto::content_digest(proto::Bytes(*source)) == content)) return std::nullopt;
  return source;
}

}  // namespace jitcache::daemon::remote
