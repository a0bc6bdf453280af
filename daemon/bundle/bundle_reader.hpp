// Reads a bundle (docs/bundle-format.md "What a reader checks") from bytes it cannot trust: every
// length is checked against its limit and against the bytes left before anything is allocated for
// it, each zstd frame's recorded size before it is decoded, each image against its checksum, and at
// the end the digest of every byte read and the signature. It holds one entry at a time.
//
// A failure says which check failed and, past the header, at which entry ("entry 3 of 10: image:
// the checksum does not match"). Whether a signer is trusted is the caller's business: the reader
// only proves that the key in the header signed every byte.
// Thread safety: one reader per source.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include <common/result.hpp>
#include <daemon/bundle/bundle_entry.hpp>
#include <daemon/bundle/byte_source.hpp>
#include <daemon/bundle/sha256_stream.hpp>

namespace jitcache::daemon::bundle {

struct ReadEntry {
  BundleEntry entry;
  std::vector<std::uint8_t> record;   // the entry's bytes as the file holds them (after its length)
  std::vector<std::uint8_t> decoded;  // the raw image of a zstd entry; empty for a raw one
  proto::Bytes raw_image() const {
    return entry.codec == k_codec_raw ? proto::Bytes(entry.image) : proto::Bytes(decoded);
  }
};

// Whether next() decodes a zstd image and checks it against its checksum (full), or leaves that to
// check_image (deferred): an importer skips the decoding of an entry it will not import (one already
// present, a duplicate), so a bundle of such entries costs it no decoding.
enum class ImageCheck { full, deferred };

// Decodes a deferred entry's image (into `read.decoded`) and checks it against its checksum.
common::Result<void> check_image(ReadEntry& read, const ReaderLimits& limits);

// One entry's record (the `E` bytes after its length) with every check of docs/bundle-format.md
// but the image's decoding and checksum: its fields, lengths, codecs and zstd frame headers.
common::Result<BundleEntry> parse_entry_record(proto::Bytes record, const ReaderLimits& limits);

class BundleReader {
 public:
  // Reads and checks the head and the header. Errors: corrupt (not a bundle, a bad field),
  // unsupported (another format version), too_large (over limits.max_bundle_bytes).
  static common::Result<BundleReader> open(ByteSource& source, const ReaderLimits& limits);

  const BundleHeader& header() const { return m_header; }
  // The next entry, checked; nullopt once every entry has been read and the trailer has verified
  // (then digest() is the bundle's). Errors as open's, and forbidden-free: a signature that does
  // not verify is ErrorCode::corrupt.
  common::Result<std::optional<ReadEntry>> next(ImageCheck check = ImageCheck::full);
  const proto::Digest256& digest() const { return m_digest; }
  std::uint64_t entries_read() const { return m_read; }

 private:
  BundleReader(ByteSource& source, const ReaderLimits& limits) : m_source(&source), m_limits(limits) {}
  common::Result<void> read(std::span<std::uint8_t> out);
  common::Result<ReadEntry> read_entry(ImageCheck check);
  common::Result<void> read_trailer();
  common::Error at_entry(const common::Error& error) const;

  ByteSource* m_source;
  ReaderLimits m_limits;
  BundleHeader m_header;
  Sha256Stream m_hash;
  std::uint64_t m_read = 0;
  bool m_done = false;
  proto::Digest256 m_digest;
};

}  // namespace jitcache::daemon::bundle
