#include <proto/published_image.hpp>

#include <algorithm>
#include <common/result.hpp>

namespace jitcache::proto {

Payload encode_published_image_head(const FastKey& fast_key, const EntryInfo& info, std::uint32_t image_size) {
  Payload tail;
  ByteWriter tail_writer(tail);
  encode_fast_key(tail_writer, fast_key);
  const Payload reply_head = encode_lookup_reply_head(info, image_size);
  tail_writer.raw(Bytes(reply_head));

  constexpr std::size_t fixed = k_published_magic.size() + 2 + 2;  // magic, version, pad length
  const std::size_t pad =
      (k_published_image_alignment - (fixed + tail.size()) % k_published_image_alignment) % k_published_image_alignment;
  Payload out;
  out.reserve(fixed + pad + tail.size());
  ByteWriter w(out);
  w.raw(Bytes(k_published_magic));
  w.u16(k_published_format_version);
  w.u16(static_cast<std::uint16_t>(pad));
  out.insert(out.end(), pad, 0);
  w.raw(Bytes(tail));
  return out;
}

Payload encode_published_image(const FastKey& fast_key, const EntryInfo& info, Bytes image) {
  Payload out = encode_published_image_head(fast_key, info, static_cast<std::uint32_t>(image.size()));
  out.insert(out.end(), image.begin(), image.end());
  return out;
}

common::Result<PublishedImage> decode_published_image(Bytes file) {
  if (file.size() < k_published_magic.size() ||
      !std::equal(k_published_magic.begin(), k_published_magic.end(), file.begin())) {
    return common::make_error(common::ErrorCode::invalid_argument, "not a published image (wrong magic)");
  }
  ByteReader r(file.subspan(k_published_magic.size()));
  auto version = r.u16("format version");
  JITCACHE_TRY(version);
  if (*version != k_published_format_version && *version != k_published_format_unpadded) {
    return common::make_error(common::ErrorCode::invalid_argument,
                              "published image format " + std::to_string(*version) +
                                  " is not one this library reads (" + std::to_string(k_published_format_unpadded) +
                                  " or " + std::to_string(k_published_format_version) + ")");
  }
  if (*version == k_published_format_version) {
    auto pad = r.u16("pad length");
    JITCACHE_TRY(pad);
    if (*pad >= k_published_image_alignment) {
      return common::make_error(common::ErrorCode::invalid_argument, "published image pad of " + std::to_string(*pad) +
                                                                         " bytes is longer than its alignment");
    }
    for (std::uint16_t i = 0; i < *pad; ++i) {
      auto zero = r.u8("pad");
      JITCACHE_TRY(zero);
      if (*zero != 0)
        return common::make_error(common::ErrorCode::invalid_argument, "published image pad is not zeros");
    }
  }
  auto fast_key = decode_fast_key(r);
  JITCACHE_TRY(fast_key);
  const std::size_t consumed = file.size() - r.remaining();
  auto reply = decode_lookup_reply(file.subspan(consumed));
  JITCACHE_TRY(reply);
  // One pad is right for a file: the one that aligns its image. Another is refused, so a file has one
  // form only (what the daemon writes) and a reader may count on the alignment.
  if (*version == k_published_format_version &&
      static_cast<std::size_t>(reply->image.data() - file.data()) % k_published_image_alignment != 0) {
    return common::make_error(common::ErrorCode::invalid_argument, "published image pad does not align the image to " +
                                                                       std::to_string(k_published_image_alignment) +
                                                                       " bytes");
  }
  return PublishedImage{std::move(*fast_key), std::move(*reply)};
}

std::string published_dir_for(const std::string& socket_path) { return socket_path + k_published_dir_suffix; }

std::string published_file_name(const Digest256& fast_key_id) { return to_hex(fast_key_id); }

}  // namespace jitcache::proto
