// One image inside a fat binary, as the reader returns it: what it is (PTX, cubin, LTO-IR), which
// architecture it targets, the ptxas options nvcc embedded with it, and its bytes, decompressed.
//
// Thread safety: a value type; distinct objects may be used from different threads. The bytes of an
// uncompressed entry are a view into the caller's buffer and stay valid only as long as it does;
// a decompressed entry owns its bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace jitcache::client::fatbin {

enum class EntryKind { ptx, cubin, lto_ir, other };

// sm_XY (plain), sm_XYa (runs only on X.Y), sm_XYf (runs within the family X.*).
enum class ArchVariant { plain, arch_specific, family };

enum class Compression { none, zstd, lz4 };

struct Arch {
  unsigned sm = 0;  // 90 for sm_90: major * 10 + minor
  ArchVariant variant = ArchVariant::plain;

  unsigned major() const { return sm / 10; }
  unsigned minor() const { return sm % 10; }
  friend bool operator==(const Arch&, const Arch&) = default;
};

struct Entry {
  EntryKind kind = EntryKind::other;
  std::uint16_t raw_kind = 0;  // the kind field as stored, for messages about kinds we do not know
  Arch arch;
  // PTX ISA version for PTX entries (9.0); the ELF ABI version for cubins (1.8).
  unsigned version_major = 0;
  unsigned version_minor = 0;
  // The ptxas options nvcc stored with a PTX entry ("-O2  -maxrregcount=32 "), empty when none. The
  // driver applies them when it JITs this PTX, so a cache must apply and key on them too.
  std::string ptxas_options;
  Compression compression = Compression::none;
  std::uint64_t flags = 0;
  std::size_t offset = 0;  // of the entry header from the start of the parsed buffer, for messages

  // The payload: the PTX text (NUL padding included) or the cubin ELF, decompressed.
  std::span<const std::byte> bytes;
  // Holds the decompressed bytes when `bytes` points into it; shared so copies stay cheap and valid.
  std::shared_ptr<const std::vector<std::byte>> owned;
  // A compressed entry read with ReadLimits::defer_decompression: its compressed payload (a view of
  // the input) and the size it claims uncompressed, until decompress_entry() fills `bytes`.
  std::span<const std::byte> compressed;
  std::uint64_t uncompressed_size = 0;
  bool awaits_decompression() const { return !compressed.empty() && bytes.empty(); }

  // The PTX text up to its first NUL (PTX payloads are NUL-padded to 8 bytes).
  std::string_view ptx_text() const;
};

// "sm_90", "sm_90a", "sm_100f"; with `prefix` "compute" for PTX entries.
std::string arch_name(const Arch& arch, std::string_view prefix = "sm");
std::string_view kind_name(EntryKind kind);
std::string_view compression_name(Compression compression);
// "sm_90 cubin", "compute_90 PTX 9.0 (zstd)": one line per entry in "no image" messages.
std::string describe(const Entry& entry);

}  // namespace jitcache::client::fatbin
