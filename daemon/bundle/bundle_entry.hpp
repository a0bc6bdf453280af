// What a bundle holds (docs/bundle-format.md): its header and its entries, each as the exporting
// store kept it, and the limits a reader holds a file it cannot trust to.
// Thread safety: values.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <proto/digest.hpp>
#include <proto/key.hpp>

namespace jitcache::daemon::bundle {

inline constexpr std::array<std::uint8_t, 4> k_bundle_magic{0x4A, 0x43, 0x42, 0x31};   // "JCB1"
inline constexpr std::array<std::uint8_t, 4> k_trailer_magic{0x4A, 0x43, 0x42, 0x53};  // "JCBS"
// Version 2 added each entry's origin (docs/bundle-format.md "Versions"); a version 1 bundle is
// refused: its signature vouched for every entry the exporting caller could see, its own namespace's
// included, so it cannot say which entries were shared.
inline constexpr std::uint16_t k_bundle_format_version = 2;
inline constexpr std::size_t k_max_header_length = 4096;
inline constexpr std::size_t k_max_host_length = 255;
inline constexpr std::size_t k_max_bundle_producer_length = 64;
inline constexpr std::uint64_t k_max_bundle_entries = 1'000'000;
// The signed message is this prefix followed by the file's digest (docs/bundle-format.md).
inline constexpr char k_signature_context[] = "jitcache bundle 2\n";
// Magic, version, flags and the header length.
inline constexpr std::size_t k_head_size = 12;
// Magic, entry count, digest, signature.
inline constexpr std::size_t k_trailer_size = 4 + 8 + 32 + 64;
// An image's and a source's codec in a bundle: persisted, never reused (the image's numbers are
// those of the store's entries.codec, docs/entry-format.md).
inline constexpr std::uint8_t k_codec_raw = 0;
inline constexpr std::uint8_t k_codec_zstd = 1;

struct BundleHeader {
  std::string host;
  std::int64_t created_at_ms = 0;
  std::uint64_t entry_count = 0;
  std::array<std::uint8_t, 32> signer_key{};  // zero: unsigned
  std::string producer;                       // "jitcached 0.x"

  bool is_signed() const;
};

// Where an entry came from on the exporting host: persisted (each entry's first byte), never
// reused. Only a `shared` entry is vouched for by the bundle's signature: the exporting host's
// namespace rules made it shared there (the daemon compiled it, or a trusted uid wrote it).
enum class EntryOrigin : std::uint8_t {
  shared = 0,            // the exporting host's shared namespace
  caller_namespace = 1,  // the exporting caller's own namespace: that uid's word only
};

struct BundleEntry {
  EntryOrigin origin = EntryOrigin::shared;
  proto::KeyFields key;
  proto::Checksum128 content_fast;
  std::string producer;
  std::uint64_t compile_time_us = 0;
  std::int64_t created_at_ms = 0;
  std::uint8_t codec = k_codec_raw;
  std::uint64_t raw_size = 0;
  proto::Checksum128 checksum;        // of the raw image
  std::vector<std::uint8_t> image;    // as kept: raw_size bytes (raw) or one zstd frame
  std::uint64_t source_raw_size = 0;  // 0: no source
  std::vector<std::uint8_t> source;   // one zstd frame, or empty
};

struct ReaderLimits {
  // The whole file (bundle_max_size), and one entry: its record, its raw image and its raw source.
  std::uint64_t max_bundle_bytes = 4ull << 30;
  std::uint64_t max_entry_bytes = 64ull << 20;
};

}  // namespace jitcache::daemon::bundle
