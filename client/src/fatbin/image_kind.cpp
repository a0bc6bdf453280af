#include <client/src/fatbin/image_kind.hpp>

#include <client/src/fatbin/elf_extent.hpp>
#include <client/src/fatbin/fatbin_format.hpp>
#include <client/src/fatbin/fatbin_reader.hpp>
#include <client/src/fatbin/little_endian.hpp>

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <common/result.hpp>
#include <cstdint>
#include <cstring>
#include <optional>

namespace jitcache::client::fatbin {
namespace {

using common::ErrorCode;
using common::make_error;

// Rationale: a PTX module of a whole library is tens of MiB; a string with no NUL within 1 GiB is not
// a PTX module, and the cap bounds how far we scan a pointer that lies.
constexpr std::size_t k_max_ptx_size = std::size_t{1} << 30;
constexpr std::uint64_t k_max_container_bytes = std::uint64_t{1} << 34;

constexpr std::array<unsigned char, 4> k_elf_magic{0x7F, 'E', 'L', 'F'};

std::array<unsigned char, 4> le_bytes(std::uint32_t value) {
  return {static_cast<unsigned char>(value), static_cast<unsigned char>(value >> 8),
          static_cast<unsigned char>(value >> 16), static_cast<unsigned char>(value >> 24)};
}

// Compares byte by byte and stops at the first mismatch, so a shorter NUL-terminated string is never
// read past its end (no magic byte is zero).
bool starts_with(const unsigned char* image, const std::array<unsigned char, 4>& magic) {
  for (std::size_t i = 0; i < magic.size(); ++i) {
    if (image[i] != magic[i]) return false;
  }
  return true;
}

// Rationale: mincore(2) verifies up to this many pages per call (its vector is on the stack); the
// chunks grow from one page, so a small module costs one or two calls and a 3 MB one about a dozen.
constexpr std::size_t k_max_probe_pages = 256;

// Whether every page of [begin, begin + bytes) is mapped (begin page-aligned). mincore fails with
// ENOMEM for an unmapped page and touches nothing, so no signal can be raised. A page mapped without
// read permission (PROT_NONE) passes: the driver reads such a text the same way.
bool mapped(std::uintptr_t begin, std::size_t bytes) {
  unsigned char residency[k_max_probe_pages];
  return ::mincore(reinterpret_cast<void*>(begin), bytes, residency) == 0;
}

// strnlen that never reads a page it has not seen mapped: the text's first page is the caller's
// pointer (read by the magic checks already); each page after it is checked before it is scanned.
// nullopt: unmapped memory came before a NUL, so the text is not a C string the driver could read.
std::optional<std::size_t> mapped_strnlen(const char* text, std::size_t limit) {
  const auto page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  const auto start = reinterpret_cast<std::uintptr_t>(text);
  std::uintptr_t checked_end = (start / page + 1) * page;
  std::size_t length = 0;
  std::size_t chunk_pages = 1;
  for (;;) {
    const std::size_t span = std::min<std::size_t>(checked_end - (start + length), limit - length);
    const std::size_t found = strnlen(text + length, span);
    length += found;
    if (found < span || length == limit) return length;
    if (mapped(checked_end, chunk_pages * page)) {
      checked_end += chunk_pages * page;
      chunk_pages = std::min(chunk_pages * 2, k_max_probe_pages);
      continue;
    }
    // Some page of the chunk is unmapped: go on up to the first one only.
    std::size_t usable = 0;
    while (usable < chunk_pages && mapped(checked_end + usable * page, page)) ++usable;
    if (usable == 0) return std::nullopt;
    checked_end += usable * page;
    chunk_pages = 1;
  }
}

}  // namespace

common::Result<ImageView> classify_image(const void* image) {
  if (image == nullptr) {
    return make_error(ErrorCode::invalid_argument, "image: null pointer");
  }
  const auto* bytes = static_cast<const unsigned char*>(image);
  const auto* data = static_cast<const std::byte*>(image);

  if (starts_with(bytes, k_elf_magic)) {
    auto size = elf_extent(data, std::nullopt);
    JITCACHE_TRY(size);
    return ImageView{ImageKind::cubin, std::span<const std::byte>(data, *size), false};
  }
  if (starts_with(bytes, le_bytes(k_wrapper_magic))) {
    auto container = container_behind_wrapper(std::span<const std::byte>(data, k_wrapper_size));
    JITCACHE_TRY(container);
    return ImageView{ImageKind::fatbin, *container, true};
  }
  if (starts_with(bytes, le_bytes(k_container_magic))) {
    const std::span<const std::byte> header(data, k_container_header_min);
    const auto header_size = load_le<std::uint16_t>(header, 6);
    const auto fat_size = load_le<std::uint64_t>(header, 8);
    if (header_size < k_container_header_min || fat_size > k_max_container_bytes) {
      return make_error(ErrorCode::corrupt, "fat binary container at offset 0: header size " +
                                                std::to_string(header_size) + " and " + std::to_string(fat_size) +
                                                " bytes of entries are not plausible");
    }
    return ImageView{ImageKind::fatbin,
                     std::span<const std::byte>(data, header_size + static_cast<std::size_t>(fat_size)), false};
  }
  const auto scanned = mapped_strnlen(static_cast<const char*>(image), k_max_ptx_size);
  if (!scanned) {
    return make_error(ErrorCode::invalid_argument,
                      "image: not ELF or a fat binary, and unmapped memory before any NUL, so not PTX text");
  }
  const std::size_t length = *scanned;
  if (length == k_max_ptx_size) {
    return make_error(ErrorCode::too_large, "image: not ELF or a fat binary, and no NUL within 1 GiB, so not PTX text");
  }
  if (length == 0) {
    return make_error(ErrorCode::invalid_argument, "image: empty PTX text");
  }
  return ImageView{ImageKind::ptx, std::span<const std::byte>(data, length), false};
}

std::string_view image_kind_name(ImageKind kind) {
  switch (kind) {
    case ImageKind::cubin: return "cubin";
    case ImageKind::fatbin: return "fat binary";
    case ImageKind::ptx: return "PTX";
  }
  return "unknown";
}

}  // namespace jitcache::client::fatbin
