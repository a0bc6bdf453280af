// The last check before a cached image reaches the driver (client/src/loader/cached_image_check):
// the wrong key, a short image, a checksum mismatch, a non-CUDA ELF and a cut ELF are all refused,
// because cuModuleLoadData takes no size and a damaged cubin can crash the driver.
#include <client/src/loader/cached_image_check.hpp>

#include <catch2/catch.hpp>

#include <cstring>
#include <vector>

#include <proto/digest.hpp>

namespace ld = jitcache::client::loader;
namespace proto = jitcache::proto;
using jitcache::client::transport::FetchedImage;

namespace {

template <class T>
void put(std::vector<std::uint8_t>& bytes, std::size_t offset, T value) {
  std::memcpy(bytes.data() + offset, &value, sizeof(value));
}

// A minimal whole ELF64 CUDA image: header, one null section header, nothing else.
std::vector<std::uint8_t> tiny_cuda_elf() {
  std::vector<std::uint8_t> elf(64 + 64, 0);
  std::memcpy(elf.data(),
              "\x7f"
              "ELF",
              4);
  elf[4] = 2;  // ELFCLASS64
  elf[5] = 1;  // little endian
  elf[6] = 1;
  put<std::uint16_t>(elf, 16, 2);    // ET_EXEC
  put<std::uint16_t>(elf, 18, 190);  // EM_CUDA
  put<std::uint32_t>(elf, 20, 1);
  put<std::uint64_t>(elf, 40, 64);  // e_shoff
  put<std::uint16_t>(elf, 52, 64);  // e_ehsize
  put<std::uint16_t>(elf, 58, 64);  // e_shentsize
  put<std::uint16_t>(elf, 60, 1);   // e_shnum
  return elf;
}

proto::KeyFields sample_key() {
  proto::KeyFields key;
  key.content = proto::sha256(proto::as_bytes("ptx"));
  key.arch = "sm_90a";
  key.driver_api = 13000;
  key.driver_build = "580.159.04";
  key.options = "";
  return key;
}

FetchedImage fetched_for(const proto::KeyFields& key, std::vector<std::uint8_t> image) {
  FetchedImage fetched;
  fetched.info.key = key;
  fetched.info.raw_size = image.size();
  fetched.info.checksum = proto::xxh3_128(proto::Bytes(image));
  fetched.image.assign(image.begin(), image.end());
  return fetched;
}

}  // namespace

TEST_CASE("cached image check: a whole CUDA ELF for the key asked passes") {
  auto key = sample_key();
  CHECK(ld::check_cached_image(fetched_for(key, tiny_cuda_elf()), key).ok());
}

TEST_CASE("cached image check: an answer for another key is refused") {
  auto key = sample_key();
  auto other = key;
  other.arch = "sm_80";
  auto checked = ld::check_cached_image(fetched_for(other, tiny_cuda_elf()), key);
  REQUIRE_FALSE(checked.ok());
  CHECK_THAT(checked.error().message, Catch::Contains("another key"));
}

TEST_CASE("cached image check: size and checksum mismatches are refused") {
  auto key = sample_key();
  auto short_image = fetched_for(key, tiny_cuda_elf());
  short_image.image.pop_back();
  CHECK_FALSE(ld::check_cached_image(short_image, key).ok());

  auto flipped = fetched_for(key, tiny_cuda_elf());
  flipped.image[100] ^= 0x01;
  auto checked = ld::check_cached_image(flipped, key);
  REQUIRE_FALSE(checked.ok());
  CHECK_THAT(checked.error().message, Catch::Contains("checksum"));
}

TEST_CASE("cached image check: a non-CUDA ELF and a cut ELF are refused even with a good checksum") {
  auto key = sample_key();
  auto x86 = tiny_cuda_elf();
  put<std::uint16_t>(x86, 18, 62);  // EM_X86_64
  CHECK_FALSE(ld::check_cached_image(fetched_for(key, x86), key).ok());

  auto cut = tiny_cuda_elf();
  put<std::uint64_t>(cut, 40, 4096);  // section headers claimed past the end
  auto checked = ld::check_cached_image(fetched_for(key, cut), key);
  REQUIRE_FALSE(checked.ok());
  CHECK_THAT(checked.error().message, Catch::Contains("ELF"));

  auto text = std::vector<std::uint8_t>{'h', 'e', 'l', 'l', 'o'};
  CHECK_FALSE(ld::check_cached_image(fetched_for(key, text), key).ok());
}
