#include <client/src/loader/cached_image_check.hpp>

#include <cstring>

#include <client/src/fatbin/elf_extent.hpp>

namespace jitcache::client::loader {

using common::ErrorCode;
using common::make_error;

namespace {
constexpr std::uint16_t k_em_cuda = 190;
constexpr std::uint8_t k_elfclass64 = 2;
constexpr std::uint8_t k_little_endian = 1;
}  // namespace

common::Result<void> check_cached_image(const transport::FetchedImage& fetched, const proto::KeyFields& asked) {
  const proto::Bytes image = fetched.bytes();
  if (!(fetched.info.key == asked)) return make_error(ErrorCode::corrupt, "the daemon answered for another key");
  if (image.size() != fetched.info.raw_size) {
    return make_error(ErrorCode::corrupt, "the image has " + std::to_string(image.size()) +
                                              " bytes, the entry records " + std::to_string(fetched.info.raw_size));
  }
  if (!fetched.checksum_verified && proto::xxh3_128(image) != fetched.info.checksum) {
    return make_error(ErrorCode::corrupt, "the image's XXH3-128 does not match the entry's checksum");
  }
  if (image.size() < fatbin::k_elf64_header_size || std::memcmp(image.data(),
                                                                "\x7f"
                                                                "ELF",
                                                                4) != 0) {
    return make_error(ErrorCode::corrupt, "the image is not an ELF file");
  }
  std::uint16_t machine = 0;
  std::memcpy(&machine, image.data() + 18, sizeof(machine));
  if (image[4] != k_elfclass64 || image[5] != k_little_endian || machine != k_em_cuda) {
    return make_error(ErrorCode::corrupt,
                      "the image is not a 64-bit little-endian CUDA ELF (e_machine " + std::to_string(machine) + ")");
  }
  auto extent = fatbin::elf_extent(reinterpret_cast<const std::byte*>(image.data()), image.size());
  if (!extent) return make_error(ErrorCode::corrupt, "the image's ELF structure is damaged: " + extent.error().message);
  return {};
}

}  // namespace jitcache::client::loader
