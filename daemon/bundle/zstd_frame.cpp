#include <daemon/bundle/zstd_frame.hpp>

#include <zstd.h>

namespace jitcache::daemon::bundle {

using common::ErrorCode;
using common::make_error;

common::Result<void> check_zstd_frame(proto::Bytes frame, std::uint64_t declared_size, std::uint64_t limit,
                                      const std::string& what) {
  if (declared_size > limit) {
    return make_error(ErrorCode::too_large, what + " of " + std::to_string(declared_size) +
                                                " bytes is over the limit of " + std::to_string(limit));
  }
  const unsigned long long content = ZSTD_getFrameContentSize(frame.data(), frame.size());
  if (content == ZSTD_CONTENTSIZE_ERROR) return make_error(ErrorCode::corrupt, what + ": not a zstd frame");
  if (content == ZSTD_CONTENTSIZE_UNKNOWN) {
    return make_error(ErrorCode::corrupt, what + ": the zstd frame does not record its content size");
  }
  if (content != declared_size) {
    return make_error(ErrorCode::corrupt, what + ": the zstd frame holds " + std::to_string(content) +
                                              " bytes, the entry says " + std::to_string(declared_size));
  }
  const std::size_t frame_size = ZSTD_findFrameCompressedSize(frame.data(), frame.size());
  if (ZSTD_isError(frame_size) || frame_size != frame.size()) {
    return make_error(ErrorCode::corrupt, what + ": the zstd frame does not end where its field ends");
  }
  return {};
}

common::Result<std::vector<std::uint8_t>> decode_zstd_frame(proto::Bytes frame, std::uint64_t declared_size,
                                                            std::uint64_t limit, const std::string& what) {
  JITCACHE_TRY(check_zstd_frame(frame, declared_size, limit, what));
  std::vector<std::uint8_t> out(static_cast<std::size_t>(declared_size));
  const std::size_t got = ZSTD_decompress(out.data(), out.size(), frame.data(), frame.size());
  if (ZSTD_isError(got) || got != out.size()) {
    return make_error(ErrorCode::corrupt, what + ": the zstd frame does not decode" +
                                              (ZSTD_isError(got) ? std::string(": ") + ZSTD_getErrorName(got) : ""));
  }
  return out;
}

std::vector<std::uint8_t> encode_zstd_frame(proto::Bytes raw, int level) {
  std::vector<std::uint8_t> out(ZSTD_compressBound(raw.size()));
  const std::size_t size = ZSTD_compress(out.data(), out.size(), raw.data(), raw.size(), level);
  if (ZSTD_isError(size)) return {};
  out.resize(size);
  return out;
}

}  // namespace jitcache::daemon::bundle
