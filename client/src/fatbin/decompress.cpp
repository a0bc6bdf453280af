#include <client/src/fatbin/decompress.hpp>

#include <lz4.h>
#include <zstd.h>

#include <limits>
#include <memory>

namespace jitcache::client::fatbin {
namespace {

using common::ErrorCode;
using common::make_error;

// Rationale: LZ4 cannot expand a block by more than about 255:1 (a match length byte is worth at
// most 255 output bytes), so a claimed size beyond that is a lie we can refuse before allocating.
constexpr std::uint64_t k_lz4_max_ratio = 255;

common::Result<std::vector<std::byte>> decompress_zstd(std::span<const std::byte> input, std::uint64_t expected_size,
                                                       const std::string& where) {
  // Every fatbinary-written frame records its content size; compare it before allocating.
  const unsigned long long frame_size = ZSTD_getFrameContentSize(input.data(), input.size());
  if (frame_size == ZSTD_CONTENTSIZE_ERROR) {
    return make_error(ErrorCode::corrupt, where + ": the zstd payload is not a valid zstd frame");
  }
  if (frame_size != ZSTD_CONTENTSIZE_UNKNOWN && frame_size != expected_size) {
    return make_error(ErrorCode::corrupt, where + ": the zstd frame holds " + std::to_string(frame_size) +
                                              " bytes but the entry header claims " + std::to_string(expected_size));
  }
  std::vector<std::byte> output(static_cast<std::size_t>(expected_size));
  // ZSTD_decompress never writes past the capacity it is given and fails when the output would not
  // fit, so a frame that lies about its size cannot overrun the buffer.
  const std::size_t written = ZSTD_decompress(output.data(), output.size(), input.data(), input.size());
  if (ZSTD_isError(written)) {
    return make_error(ErrorCode::corrupt, where + ": zstd decompression failed: " + ZSTD_getErrorName(written));
  }
  if (written != expected_size) {
    return make_error(ErrorCode::corrupt, where + ": zstd produced " + std::to_string(written) +
                                              " bytes but the entry header claims " + std::to_string(expected_size));
  }
  return output;
}

common::Result<std::vector<std::byte>> decompress_lz4(std::span<const std::byte> input, std::uint64_t expected_size,
                                                      const std::string& where) {
  if (input.size() > static_cast<std::size_t>(std::numeric_limits<int>::max()) ||
      expected_size > static_cast<std::uint64_t>(std::numeric_limits<int>::max())) {
    return make_error(ErrorCode::too_large, where + ": the lz4 payload is larger than liblz4 can decode");
  }
  if (expected_size > input.size() * k_lz4_max_ratio + 64) {
    return make_error(ErrorCode::corrupt, where + ": the entry header claims " + std::to_string(expected_size) +
                                              " bytes from a " + std::to_string(input.size()) +
                                              "-byte lz4 block, more than lz4 can expand to");
  }
  std::vector<std::byte> output(static_cast<std::size_t>(expected_size));
  // The payload is a raw LZ4 block (no frame header): LZ4_decompress_safe checks every read against
  // the input size and every write against the output capacity.
  const int written =
      LZ4_decompress_safe(reinterpret_cast<const char*>(input.data()), reinterpret_cast<char*>(output.data()),
                          static_cast<int>(input.size()), static_cast<int>(output.size()));
  if (written < 0) {
    return make_error(ErrorCode::corrupt, where + ": the lz4 block is malformed");
  }
  if (static_cast<std::uint64_t>(written) != expected_size) {
    return make_error(ErrorCode::corrupt, where + ": lz4 produced " + std::to_string(written) +
                                              " bytes but the entry header claims " + std::to_string(expected_size));
  }
  return output;
}

}  // namespace

common::Result<std::vector<std::byte>> decompress(Compression compression, std::span<const std::byte> input,
                                                  std::uint64_t expected_size, std::uint64_t max_size,
                                                  const std::string& where) {
  if (expected_size == 0) {
    return make_error(ErrorCode::corrupt, where + ": a compressed entry claims an uncompressed size of 0");
  }
  if (expected_size > max_size) {
    return make_error(ErrorCode::too_large, where + ": the entry claims " + std::to_string(expected_size) +
                                                " bytes uncompressed, over the limit of " + std::to_string(max_size));
  }
  switch (compression) {
    case Compression::zstd: return decompress_zstd(input, expected_size, where);
    case Compression::lz4: return decompress_lz4(input, expected_size, where);
    case Compression::none: break;
  }
  return make_error(ErrorCode::internal, where + ": decompress called for an uncompressed entry");
}

}  // namespace jitcache::client::fatbin
