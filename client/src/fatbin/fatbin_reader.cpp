#include <client/src/fatbin/fatbin_reader.hpp>

#include <client/src/fatbin/decompress.hpp>
#include <client/src/fatbin/little_endian.hpp>

#include <common/result.hpp>
#include <string>

namespace jitcache::client::fatbin {
namespace {

using common::ErrorCode;
using common::make_error;

// Rationale: the largest fat binaries in the wild (whole math libraries) are a few hundred MiB; a
// wrapper whose container claims more than this is taken as garbage rather than read through.
constexpr std::uint64_t k_max_container_size = std::uint64_t{1} << 34;

std::string at(std::size_t offset) { return "at offset " + std::to_string(offset); }

// Reads the entry at `entry_offset` and sets `next_offset` to where the following entry starts.
common::Result<Entry> read_entry(std::span<const std::byte> all, std::size_t entry_offset, std::size_t container_end,
                                 const ReadLimits& limits, std::size_t& next_offset) {
  const std::string where = "fat binary entry " + at(entry_offset);
  const std::size_t available = container_end - entry_offset;
  if (available < k_entry_header_min) {
    return make_error(ErrorCode::corrupt, where + ": truncated entry header (" + std::to_string(available) +
                                              " bytes left in the container, at least " +
                                              std::to_string(k_entry_header_min) + " needed)");
  }
  const auto header = all.subspan(entry_offset, available);
  const auto header_size = load_le<std::uint32_t>(header, entry_field::header_size);
  const auto payload_size = load_le<std::uint64_t>(header, entry_field::payload_size);
  if (header_size < k_entry_header_min || header_size > available) {
    return make_error(ErrorCode::corrupt, where + ": header size " + std::to_string(header_size) + " is outside [64, " +
                                              std::to_string(available) + "] (the bytes left in its container)");
  }
  if (!fits(header_size, payload_size, available)) {
    return make_error(ErrorCode::corrupt, where + ": payload size " + std::to_string(payload_size) +
                                              " runs past the end of its container (" +
                                              std::to_string(available - header_size) + " bytes left)");
  }

  next_offset = entry_offset + header_size + static_cast<std::size_t>(payload_size);

  Entry entry;
  entry.offset = entry_offset;
  entry.raw_kind = load_le<std::uint16_t>(header, entry_field::kind);
  switch (entry.raw_kind) {
    case k_kind_ptx: entry.kind = EntryKind::ptx; break;
    case k_kind_cubin: entry.kind = EntryKind::cubin; break;
    case k_kind_lto_ir: entry.kind = EntryKind::lto_ir; break;
    default: entry.kind = EntryKind::other; break;
  }
  entry.version_minor = load_le<std::uint16_t>(header, entry_field::version_minor);
  entry.version_major = load_le<std::uint16_t>(header, entry_field::version_major);
  entry.arch.sm = load_le<std::uint32_t>(header, entry_field::arch);
  entry.flags = load_le<std::uint64_t>(header, entry_field::flags);
  const bool arch_specific = (entry.flags & k_flag_arch_specific) != 0;
  const bool family = (entry.flags & k_flag_family) != 0;
  if (arch_specific && family) {
    return make_error(ErrorCode::corrupt, where + ": flags mark the entry both arch-specific (a) and family (f)");
  }
  entry.arch.variant = arch_specific ? ArchVariant::arch_specific : family ? ArchVariant::family : ArchVariant::plain;

  // Strings referenced from the header lie inside the header (docs/driver-facts.md §3, measured).
  const auto name_offset = load_le<std::uint32_t>(header, entry_field::name_offset);
  const auto name_length = load_le<std::uint32_t>(header, entry_field::name_length);
  if (name_offset != 0 && !fits(name_offset, name_length, header_size)) {
    return make_error(ErrorCode::corrupt, where + ": file name (offset " + std::to_string(name_offset) + ", length " +
                                              std::to_string(name_length) + ") lies outside the " +
                                              std::to_string(header_size) + "-byte header");
  }
  const auto descriptor = load_le<std::uint32_t>(header, entry_field::options_descriptor);
  if (descriptor != 0) {
    if (!fits(descriptor, 8, header_size)) {
      return make_error(ErrorCode::corrupt, where + ": options descriptor offset " + std::to_string(descriptor) +
                                                " lies outside the " + std::to_string(header_size) + "-byte header");
    }
    const auto options_offset = load_le<std::uint32_t>(header, descriptor);
    const auto options_length = load_le<std::uint32_t>(header, descriptor + 4);
    if (!fits(options_offset, options_length, header_size)) {
      return make_error(ErrorCode::corrupt, where + ": options string (offset " + std::to_string(options_offset) +
                                                ", length " + std::to_string(options_length) + ") lies outside the " +
                                                std::to_string(header_size) + "-byte header");
    }
    // Only PTX entries carry ptxas options; on sm_100+ cubins the same descriptor points at binary
    // compatibility data [E-local], which is not an option string.
    if (entry.kind == EntryKind::ptx) {
      const auto* text = reinterpret_cast<const char*>(header.data() + options_offset);
      std::string_view options(text, options_length);
      options = options.substr(0, options.find('\0'));
      entry.ptxas_options.assign(options);
    }
  }

  const bool lz4 = (entry.flags & k_flag_lz4) != 0;
  const bool zstd = (entry.flags & k_flag_zstd) != 0;
  if (lz4 && zstd) {
    return make_error(ErrorCode::corrupt, where + ": flags mark the entry both lz4- and zstd-compressed");
  }
  const auto payload = header.subspan(header_size, static_cast<std::size_t>(payload_size));
  if (!lz4 && !zstd) {
    entry.bytes = payload;
    return entry;
  }
  entry.compression = lz4 ? Compression::lz4 : Compression::zstd;
  const auto compressed_size = load_le<std::uint32_t>(header, entry_field::compressed_size);
  if (compressed_size == 0 || compressed_size > payload_size) {
    return make_error(ErrorCode::corrupt, where + ": compressed size " + std::to_string(compressed_size) +
                                              " is outside [1, " + std::to_string(payload_size) +
                                              "] (the payload size)");
  }
  entry.uncompressed_size = load_le<std::uint64_t>(header, entry_field::uncompressed_size);
  entry.compressed = payload.first(compressed_size);
  if (limits.defer_decompression) return entry;
  JITCACHE_TRY(decompress_entry(entry, limits));
  return entry;
}

}  // namespace

common::Result<void> decompress_entry(Entry& entry, const ReadLimits& limits) {
  if (!entry.awaits_decompression()) return {};
  const std::string where = "fat binary entry " + at(entry.offset);
  auto decoded =
      decompress(entry.compression, entry.compressed, entry.uncompressed_size, limits.max_decompressed, where);
  JITCACHE_TRY(decoded);
  auto owned = std::make_shared<const std::vector<std::byte>>(std::move(decoded).value());
  entry.bytes = std::span<const std::byte>(owned->data(), owned->size());
  entry.owned = std::move(owned);
  return {};
}

common::Result<std::span<const std::byte>> container_behind_wrapper(std::span<const std::byte> wrapper) {
  if (wrapper.size() < k_wrapper_size) {
    return make_error(ErrorCode::corrupt, "fat binary wrapper: truncated (" + std::to_string(wrapper.size()) +
                                              " bytes, " + std::to_string(k_wrapper_size) + " needed)");
  }
  if (load_le<std::uint32_t>(wrapper, 0) != k_wrapper_magic) {
    return make_error(ErrorCode::invalid_argument, "fat binary wrapper: bad magic at offset 0");
  }
  const auto version = load_le<std::uint32_t>(wrapper, 4);
  if (version < k_wrapper_version_min || version > k_wrapper_version_max) {
    return make_error(ErrorCode::unsupported,
                      "fat binary wrapper: version " + std::to_string(version) + " is not 1 or 2");
  }
  const auto address = load_le<std::uintptr_t>(wrapper, k_wrapper_data_offset);
  if (address == 0) {
    return make_error(ErrorCode::invalid_argument, "fat binary wrapper: the data pointer is null");
  }
  if (address % k_container_alignment != 0) {
    return make_error(ErrorCode::invalid_argument, "fat binary wrapper: the data pointer is not 8-byte aligned");
  }
  const auto* data = reinterpret_cast<const std::byte*>(address);
  const std::span<const std::byte> header(data, k_container_header_min);
  if (load_le<std::uint32_t>(header, 0) != k_container_magic) {
    return make_error(ErrorCode::corrupt,
                      "fat binary wrapper: its data pointer does not point at a container "
                      "(bad magic)");
  }
  const auto header_size = load_le<std::uint16_t>(header, 6);
  const auto fat_size = load_le<std::uint64_t>(header, 8);
  if (header_size < k_container_header_min || fat_size > k_max_container_size) {
    return make_error(ErrorCode::corrupt, "fat binary wrapper: the container it points at claims header size " +
                                              std::to_string(header_size) + " and " + std::to_string(fat_size) +
                                              " bytes of entries");
  }
  return std::span<const std::byte>(data, header_size + static_cast<std::size_t>(fat_size));
}

common::Result<FatBinary> read_fatbin(std::span<const std::byte> bytes, const ReadLimits& limits) {
  if (bytes.empty()) {
    return make_error(ErrorCode::invalid_argument, "fat binary: empty input");
  }
  if (bytes.size() >= 4 && load_le<std::uint32_t>(bytes, 0) == k_wrapper_magic) {
    auto container = container_behind_wrapper(bytes);
    JITCACHE_TRY(container);
    return read_fatbin(*container, limits);
  }

  FatBinary result;
  std::size_t offset = 0;
  while (offset < bytes.size()) {
    const std::size_t left = bytes.size() - offset;
    // The magic first, so that a few bytes of something else are "not a fat binary" rather than a
    // truncated one.
    const auto code = offset == 0 ? ErrorCode::invalid_argument : ErrorCode::corrupt;
    if (left < sizeof(std::uint32_t) && offset == 0) {
      return make_error(code, "fat binary container " + at(offset) + ": " + std::to_string(left) +
                                  " bytes, too few for its magic");
    }
    if (left >= sizeof(std::uint32_t)) {
      const auto magic = load_le<std::uint32_t>(bytes, offset);
      if (magic != k_container_magic) {
        std::string why = magic == k_old_style_magic ? "a pre-CUDA-4 fat binary, not supported" : "bad magic";
        return make_error(code, "fat binary container " + at(offset) + ": " + why);
      }
    }
    if (left < k_container_header_min) {
      return make_error(ErrorCode::corrupt, "fat binary container " + at(offset) + ": truncated header (" +
                                                std::to_string(left) + " bytes left, 16 needed)");
    }
    const auto version = load_le<std::uint16_t>(bytes, offset + 4);
    const auto header_size = load_le<std::uint16_t>(bytes, offset + 6);
    const auto fat_size = load_le<std::uint64_t>(bytes, offset + 8);
    if (version != k_container_version) {
      return make_error(ErrorCode::unsupported,
                        "fat binary container " + at(offset) + ": version " + std::to_string(version) + " is not 1");
    }
    if (header_size < k_container_header_min || header_size > left) {
      return make_error(ErrorCode::corrupt, "fat binary container " + at(offset) + ": header size " +
                                                std::to_string(header_size) + " is outside [16, " +
                                                std::to_string(left) + "]");
    }
    if (!fits(header_size, fat_size, left)) {
      return make_error(ErrorCode::corrupt, "fat binary container " + at(offset) + ": claims " +
                                                std::to_string(fat_size) + " bytes of entries but only " +
                                                std::to_string(left - header_size) + " follow its header");
    }
    const std::size_t end = offset + header_size + static_cast<std::size_t>(fat_size);
    std::size_t entry_offset = offset + header_size;
    while (entry_offset < end) {
      std::size_t next_offset = end;
      auto entry = read_entry(bytes, entry_offset, end, limits, next_offset);
      JITCACHE_TRY(entry);
      entry_offset = next_offset;
      result.entries.push_back(std::move(entry).value());
    }
    ++result.containers;
    offset = end;
    // Containers are 8-byte aligned; the gap before the next one may only be zero padding.
    const std::size_t aligned = (offset + k_container_alignment - 1) / k_container_alignment * k_container_alignment;
    for (; offset < aligned && offset < bytes.size(); ++offset) {
      if (bytes[offset] != std::byte{0}) {
        return make_error(ErrorCode::corrupt, "fat binary: stray byte " + at(offset) + " between containers");
      }
    }
  }
  return result;
}

}  // namespace jitcache::client::fatbin
