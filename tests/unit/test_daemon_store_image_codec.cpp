// The store's image codec (daemon/store/image_codec.hpp) and the check every image passes before
// it leaves the store (daemon/store/verified_image.hpp).
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <variant>
#include <vector>

#include <proto/digest.hpp>

#include <daemon/store/image_codec.hpp>
#include <daemon/store/verified_image.hpp>
#include <tests/support/store_fixtures.hpp>

namespace {

using namespace jitcache;
using daemon::store::Codec;
using daemon::store::decode_image;
using daemon::store::DecodeFailure;
using daemon::store::encode_image;
using daemon::store::ImageBuffer;
using daemon::store::verified_image;

// Text-like bytes that compress well, as cubins do (long runs of similar instructions, zero padding).
std::vector<std::uint8_t> compressible_image(std::size_t size) {
  std::vector<std::uint8_t> image(size);
  for (std::size_t i = 0; i < size; ++i) image[i] = static_cast<std::uint8_t>("MOV R1, c[0x0][0x28];\n"[i % 22]);
  return image;
}

ImageBuffer buffer(const std::vector<std::uint8_t>& bytes) { return ImageBuffer(bytes.begin(), bytes.end()); }

proto::EntryInfo info_for(const std::vector<std::uint8_t>& raw, const daemon::store::EncodedImage& encoded) {
  proto::EntryInfo info;
  info.codec = static_cast<std::uint8_t>(encoded.codec);
  info.raw_size = raw.size();
  info.stored_size = encoded.codec == Codec::raw ? raw.size() : encoded.compressed.size();
  info.checksum = proto::xxh3_128(proto::Bytes(raw));
  return info;
}

std::string failure_of(const std::variant<ImageBuffer, DecodeFailure>& result) {
  const auto* failure = std::get_if<DecodeFailure>(&result);
  return failure != nullptr ? failure->reason : std::string();
}

}  // namespace

TEST_CASE("image codec: codec numbers are the persisted ones") {
  STATIC_REQUIRE(static_cast<int>(Codec::raw) == 0);
  STATIC_REQUIRE(static_cast<int>(Codec::zstd) == 1);
}

TEST_CASE("image codec: a compressible image is stored as zstd and decodes to the same bytes") {
  const auto raw = compressible_image(200'000);
  for (int level : {1, 3, 19}) {
    CAPTURE(level);
    const auto encoded = encode_image(proto::Bytes(raw), level);
    REQUIRE(encoded.codec == Codec::zstd);
    CHECK(encoded.compressed.size() < raw.size() / 10);
    auto decoded = decode_image(static_cast<std::uint8_t>(Codec::zstd), encoded.compressed, raw.size());
    REQUIRE(std::holds_alternative<ImageBuffer>(decoded));
    CHECK(std::ranges::equal(std::get<ImageBuffer>(decoded), raw));
  }
}

TEST_CASE("image codec: a raw blob decodes to itself") {
  const auto raw = testing::make_image(3, 5000);
  auto decoded = decode_image(static_cast<std::uint8_t>(Codec::raw), buffer(raw), raw.size());
  REQUIRE(std::holds_alternative<ImageBuffer>(decoded));
  CHECK(std::ranges::equal(std::get<ImageBuffer>(decoded), raw));
}

TEST_CASE("image codec: level 0 stores raw") {
  const auto encoded = encode_image(proto::Bytes(compressible_image(100'000)), 0);
  CHECK(encoded.codec == Codec::raw);
  CHECK(encoded.compressed.empty());
}

TEST_CASE("image codec: incompressible data is stored raw, whatever the level") {
  const auto random = testing::make_image(7, 100'000);
  CHECK(encode_image(proto::Bytes(random), 3).codec == Codec::raw);
  CHECK(encode_image(proto::Bytes(random), 19).codec == Codec::raw);
  // Too small to gain anything from a frame header.
  const std::vector<std::uint8_t> tiny{1, 2, 3};
  CHECK(encode_image(proto::Bytes(tiny), 3).codec == Codec::raw);
}

TEST_CASE("verified image: a damaged zstd blob is refused, never decoded into other bytes") {
  const auto raw = compressible_image(100'000);
  const auto encoded = encode_image(proto::Bytes(raw), 3);
  REQUIRE(encoded.codec == Codec::zstd);
  proto::EntryInfo info = info_for(raw, encoded);
  ImageBuffer stored = encoded.compressed;

  SECTION("intact: served") {
    auto result = verified_image(info, stored);
    REQUIRE(std::holds_alternative<ImageBuffer>(result));
    CHECK(std::ranges::equal(std::get<ImageBuffer>(result), raw));
    return;
  }
  SECTION("flipped bytes in the middle of the frame") {
    for (std::size_t i = stored.size() / 2; i < stored.size() / 2 + 8; ++i) stored[i] ^= 0x5A;
  }
  SECTION("a truncated frame") {
    stored.resize(stored.size() / 2);
    info.stored_size = stored.size();
  }
  SECTION("a frame header that is not zstd's") { stored[0] ^= 0xFF; }
  SECTION("a raw_size that differs from the frame's content size") { info.raw_size += 1; }
  SECTION("a raw_size beyond any image the daemon accepts") { info.raw_size = 1ull << 50; }
  SECTION("a blob of another size than stored_size") { stored.push_back(0); }
  SECTION("no blob at all") {
    auto result = verified_image(info, std::nullopt);
    CHECK_THAT(failure_of(result), Catch::Contains("missing"));
    return;
  }
  auto result = verified_image(info, stored);
  INFO(failure_of(result));
  REQUIRE(std::holds_alternative<DecodeFailure>(result));
  CHECK_FALSE(std::get<DecodeFailure>(result).unknown_codec);
}

TEST_CASE("verified image: the checksum is over the raw bytes, so a recompressed other image fails it") {
  const auto raw = compressible_image(50'000);
  auto other = raw;
  other[100] = 'X';
  const auto encoded_other = encode_image(proto::Bytes(other), 3);
  REQUIRE(encoded_other.codec == Codec::zstd);
  proto::EntryInfo info = info_for(raw, encode_image(proto::Bytes(raw), 3));
  info.stored_size = encoded_other.compressed.size();
  auto result = verified_image(info, encoded_other.compressed);
  CHECK_THAT(failure_of(result), Catch::Contains("checksum"));
}

TEST_CASE("verified image: an unknown codec is reported as such, not as damage") {
  const auto raw = testing::make_image(1, 100);
  proto::EntryInfo info = info_for(raw, {});
  info.codec = 9;
  auto result = verified_image(info, buffer(raw));
  REQUIRE(std::holds_alternative<DecodeFailure>(result));
  CHECK(std::get<DecodeFailure>(result).unknown_codec);
}
