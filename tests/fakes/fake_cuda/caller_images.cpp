#include <tests/fakes/fake_cuda/caller_images.hpp>

#include <tests/fakes/fake_cuda/caller_memory.hpp>
#include <tests/fakes/fake_cuda/cubin_elf.hpp>

#include <client/src/fatbin/fatbin_format.hpp>

#include <array>
#include <common/result.hpp>
#include <cstdint>
#include <cstring>

namespace jitcache::fakes::fake_cuda {
namespace {

using common::ErrorCode;

common::Error truncated(const std::string& what, std::size_t claimed) {
  return common::make_error(ErrorCode::corrupt, "truncated: " + what + " claims " + std::to_string(claimed) +
                                                    " bytes, but the memory ends before that");
}

template <class T>
T read_at(const std::vector<std::byte>& bytes, std::size_t offset) {
  T value;
  std::memcpy(&value, bytes.data() + offset, sizeof(T));
  return value;
}

bool starts_with(const std::array<unsigned char, 4>& head, std::uint32_t magic) {
  unsigned char bytes[4];
  std::memcpy(bytes, &magic, 4);
  return std::memcmp(head.data(), bytes, 4) == 0;
}

}  // namespace

CallerImageKind classify_caller_image(const void* image) {
  std::array<unsigned char, 4> head{};
  for (std::size_t i = 0; i < head.size(); ++i) {
    if (!copy_from_caller(static_cast<const unsigned char*>(image) + i, 1, &head[i])) {
      return i == 0 ? CallerImageKind::unreadable : CallerImageKind::text;
    }
    if (head[i] == 0) return CallerImageKind::text;
  }
  if (std::memcmp(head.data(),
                  "\x7f"
                  "ELF",
                  4) == 0)
    return CallerImageKind::cubin;
  if (starts_with(head, jitcache::client::fatbin::k_container_magic)) return CallerImageKind::fatbin_container;
  if (starts_with(head, jitcache::client::fatbin::k_wrapper_magic)) return CallerImageKind::fatbin_wrapper;
  return CallerImageKind::text;
}

common::Result<std::vector<std::byte>> copy_cubin_from_caller(const void* image) {
  constexpr std::size_t k_header = 64;
  const auto header = caller_bytes(image, k_header);
  if (!header) return truncated("the ELF header", k_header);
  const auto tables_end = elf_tables_end(*header);
  JITCACHE_TRY(tables_end);
  const auto head = caller_bytes(image, *tables_end);
  if (!head) return truncated("the section header table", *tables_end);
  const auto image_end = elf_image_end(*head);
  JITCACHE_TRY(image_end);
  auto whole = caller_bytes(image, *image_end);
  if (!whole) return truncated("the cubin's furthest section", *image_end);
  return std::move(*whole);
}

common::Result<CallerFatbin> copy_fatbin_from_caller(const void* image, CallerImageKind kind) {
  namespace fb = jitcache::client::fatbin;
  const void* container = image;
  if (kind == CallerImageKind::fatbin_wrapper) {
    const auto wrapper = caller_bytes(image, fb::k_wrapper_size);
    if (!wrapper) return truncated("the fat binary wrapper", fb::k_wrapper_size);
    const auto version = read_at<std::uint32_t>(*wrapper, 4);
    if (version < fb::k_wrapper_version_min || version > fb::k_wrapper_version_max) {
      return common::make_error(ErrorCode::corrupt,
                                "fat binary wrapper version " + std::to_string(version) + " is unknown");
    }
    container = reinterpret_cast<const void*>(read_at<std::uintptr_t>(*wrapper, fb::k_wrapper_data_offset));
    if (container == nullptr)
      return common::make_error(ErrorCode::corrupt, "fat binary wrapper with a null data pointer");
  }
  const auto header = caller_bytes(container, fb::k_container_header_min);
  if (!header) return truncated("the fat binary container header", fb::k_container_header_min);
  if (read_at<std::uint32_t>(*header, 0) != fb::k_container_magic) {
    return common::make_error(ErrorCode::corrupt, "the fat binary wrapper does not point at a container");
  }
  const auto header_size = read_at<std::uint16_t>(*header, 6);
  const auto fat_size = read_at<std::uint64_t>(*header, 8);
  if (header_size < fb::k_container_header_min || fat_size > fb::k_default_max_decompressed) {
    return common::make_error(ErrorCode::corrupt, "the fat binary container header has impossible sizes");
  }
  const std::size_t total = header_size + static_cast<std::size_t>(fat_size);
  auto bytes = caller_bytes(container, total);
  if (!bytes) return truncated("the fat binary container", total);
  return CallerFatbin{std::move(*bytes), container};
}

}  // namespace jitcache::fakes::fake_cuda
