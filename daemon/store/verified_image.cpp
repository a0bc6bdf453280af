#include <daemon/store/verified_image.hpp>

#include <string>
#include <utility>

namespace jitcache::daemon::store {

std::variant<ImageBuffer, DecodeFailure> verified_image(const proto::EntryInfo& info,
                                                        std::optional<ImageBuffer> stored) {
  if (!is_known_codec(info.codec)) {
    return DecodeFailure{true, "codec " + std::to_string(info.codec) + " is unknown to this jitcached"};
  }
  if (!stored) return DecodeFailure{false, "its image is missing"};
  if (stored->size() != info.stored_size) {
    return DecodeFailure{false, "its blob has " + std::to_string(stored->size()) + " bytes, the entry says " +
                                    std::to_string(info.stored_size) + " stored"};
  }
  auto decoded = decode_image(info.codec, std::move(*stored), info.raw_size);
  if (auto* failure = std::get_if<DecodeFailure>(&decoded)) return std::move(*failure);
  auto& image = std::get<ImageBuffer>(decoded);
  // Over the raw bytes, whatever the codec: the checksum vouches for what leaves the daemon.
  if (proto::xxh3_128(proto::Bytes(image.data(), image.size())) != info.checksum) {
    return DecodeFailure{false, "its image fails its XXH3-128 checksum"};
  }
  return std::move(image);
}

}  // namespace jitcache::daemon::store
