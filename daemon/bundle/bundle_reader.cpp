#include <daemon/bundle/bundle_reader.hpp>

#include <algorithm>
#include <array>
#include <string>

#include <daemon/bundle/zstd_frame.hpp>
#include <proto/byte_io.hpp>
#include <proto/messages.hpp>
#include <proto/request_fields.hpp>
#include <proto/signing.hpp>

namespace jitcache::daemon::bundle {

using common::ErrorCode;
using common::make_error;

namespace {

std::uint64_t le64(const std::uint8_t* p) {
  std::uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

common::Error corrupt(std::string message) { return common::Error{ErrorCode::corrupt, std::move(message)}; }

// A decode error of the byte reader is a malformed field here, not a bad request.
common::Error as_corrupt(const common::Error& error) {
  return error.code == ErrorCode::too_large ? error : corrupt(error.message);
}

}  // namespace

common::Result<void> BundleReader::read(std::span<std::uint8_t> out) {
  JITCACHE_TRY(m_source->read_exactly(out));
  m_hash.update(proto::Bytes(out.data(), out.size()));
  return {};
}

common::Result<BundleReader> BundleReader::open(ByteSource& source, const ReaderLimits& limits) {
  if (source.remaining() > limits.max_bundle_bytes) {
    return make_error(ErrorCode::too_large, "the bundle's " + std::to_string(source.remaining()) +
                                                " bytes are over the limit of " +
                                                std::to_string(limits.max_bundle_bytes) + " (bundle_max_size)");
  }
  BundleReader reader(source, limits);
  std::array<std::uint8_t, k_head_size> head{};
  if (source.remaining() < head.size()) return corrupt("not a jitcache bundle: shorter than its head");
  JITCACHE_TRY(reader.read(head));
  if (!std::equal(k_bundle_magic.begin(), k_bundle_magic.end(), head.begin())) {
    return corrupt("not a jitcache bundle (bad magic)");
  }
  proto::ByteReader r{proto::Bytes(head).subspan(4)};
  const std::uint16_t version = *r.u16("format version");
  const std::uint16_t flags = *r.u16("flags");
  const std::uint32_t header_length = *r.u32("header length");
  if (version == 1) {
    return make_error(ErrorCode::unsupported,
                      "bundle format version 1 is no longer read: its signature does not say which entries "
                      "were shared on the exporting host; export the entries again with this jitcached");
  }
  if (version != k_bundle_format_version) {
    return make_error(ErrorCode::unsupported, "bundle format version " + std::to_string(version) +
                                                  " is not supported (this jitcached reads version " +
                                                  std::to_string(k_bundle_format_version) + ")");
  }
  if (flags != 0) return corrupt("header: reserved flags are set");
  if (header_length > k_max_header_length) {
    return corrupt("header: its length " + std::to_string(header_length) + " is over the limit of " +
                   std::to_string(k_max_header_length));
  }
  std::vector<std::uint8_t> body(header_length);
  JITCACHE_TRY(reader.read(body));
  proto::ByteReader h{proto::Bytes(body)};
  auto host = h.str16("host", k_max_host_length);
  if (!host) return as_corrupt(host.error());
  if (auto printable = proto::check_printable_field("host", *host); !printable)
    return corrupt(printable.error().message);
  reader.m_header.host = std::string(*host);
  auto created = h.i64("created_at_ms");
  auto count = h.u64("entry count");
  if (!created || !count) return corrupt("header: truncated");
  reader.m_header.created_at_ms = *created;
  reader.m_header.entry_count = *count;
  if (*count > k_max_bundle_entries) {
    return corrupt("header: " + std::to_string(*count) + " entries, over the limit of " +
                   std::to_string(k_max_bundle_entries));
  }
  auto key = h.digest("signer key");
  if (!key) return as_corrupt(key.error());
  std::copy(key->bytes.begin(), key->bytes.end(), reader.m_header.signer_key.begin());
  auto producer = h.str16("producer", k_max_bundle_producer_length);
  if (!producer) return as_corrupt(producer.error());
  if (auto printable = proto::check_printable_field("producer", *producer); !printable) {
    return corrupt(printable.error().message);
  }
  reader.m_header.producer = std::string(*producer);
  if (auto end = h.expect_end("the bundle header"); !end) return corrupt(end.error().message);
  return reader;
}

common::Error BundleReader::at_entry(const common::Error& error) const {
  common::Error out = error;
  out.message =
      "entry " + std::to_string(m_read + 1) + " of " + std::to_string(m_header.entry_count) + ": " + error.message;
  return out;
}

common::Result<std::optional<ReadEntry>> BundleReader::next(ImageCheck check) {
  if (m_done) return std::optional<ReadEntry>{};
  if (m_read == m_header.entry_count) {
    JITCACHE_TRY(read_trailer());
    m_done = true;
    return std::optional<ReadEntry>{};
  }
  auto entry = read_entry(check);
  if (!entry) return at_entry(entry.error());
  ++m_read;
  return std::optional<ReadEntry>(std::move(*entry));
}

common::Result<ReadEntry> BundleReader::read_entry(ImageCheck check) {
  std::array<std::uint8_t, 8> length_bytes{};
  JITCACHE_TRY(read(length_bytes));
  const std::uint64_t length = le64(length_bytes.data());
  if (length > m_limits.max_entry_bytes) {
    return make_error(ErrorCode::too_large, "its " + std::to_string(length) + " bytes are over the limit of " +
                                                std::to_string(m_limits.max_entry_bytes) + " per entry");
  }
  if (length > m_source->remaining()) {
    return corrupt("it declares " + std::to_string(length) + " bytes, the file has " +
                   std::to_string(m_source->remaining()) + " left: truncated");
  }
  std::vector<std::uint8_t> record(static_cast<std::size_t>(length));
  JITCACHE_TRY(read(record));
  auto parsed = parse_entry_record(proto::Bytes(record), m_limits);
  JITCACHE_TRY(parsed);
  ReadEntry out;
  out.entry = std::move(*parsed);
  out.record = std::move(record);
  if (check == ImageCheck::full) JITCACHE_TRY(check_image(out, m_limits));
  return out;
}

common::Result<void> check_image(ReadEntry& read, const ReaderLimits& limits) {
  const BundleEntry& e = read.entry;
  if (e.codec == k_codec_zstd) {
    auto decoded = decode_zstd_frame(proto::Bytes(e.image), e.raw_size, limits.max_entry_bytes, "image");
    if (!decoded) return decoded.error();
    read.decoded = std::move(*decoded);
  }
  if (proto::xxh3_128(read.raw_image()) != e.checksum) return corrupt("image: the checksum does not match");
  return {};
}

common::Result<BundleEntry> parse_entry_record(proto::Bytes record, const ReaderLimits& limits) {
  proto::ByteReader r{record};
  BundleEntry e;
  auto origin = r.u8("origin");
  if (!origin) return as_corrupt(origin.error());
  if (*origin > static_cast<std::uint8_t>(EntryOrigin::caller_namespace)) {
    return corrupt("origin " + std::to_string(*origin) + " is not known");
  }
  e.origin = static_cast<EntryOrigin>(*origin);
  auto key = proto::decode_key(r);
  if (!key) return as_corrupt(key.error());
  e.key = std::move(*key);
  auto content_fast = r.checksum("content_fast");
  if (!content_fast) return as_corrupt(content_fast.error());
  e.content_fast = *content_fast;
  auto producer = r.str16("producer", proto::k_max_producer_length);
  if (!producer) return as_corrupt(producer.error());
  if (auto printable = proto::check_printable_field("producer", *producer); !printable) {
    return corrupt(printable.error().message);
  }
  e.producer = std::string(*producer);
  auto compile_time = r.u64("compile_time_us");
  auto created = r.i64("created_at_ms");
  auto codec = r.u8("codec");
  auto raw_size = r.u64("raw_size");
  auto checksum = r.checksum("checksum");
  auto image_length = r.u64("image length");
  if (!compile_time || !created || !codec || !raw_size || !checksum || !image_length) {
    return corrupt("its fields run past its length");
  }
  if (auto valid = proto::check_compile_time_us(*compile_time); !valid) return corrupt(valid.error().message);
  e.compile_time_us = *compile_time;
  e.created_at_ms = *created;
  e.codec = *codec;
  e.raw_size = *raw_size;
  e.checksum = *checksum;
  if (e.codec != k_codec_raw && e.codec != k_codec_zstd) {
    return corrupt("image codec " + std::to_string(e.codec) + " is not known");
  }
  if (e.raw_size == 0) return corrupt("an empty image");
  if (e.raw_size > limits.max_entry_bytes) {
    return make_error(ErrorCode::too_large, "an image of " + std::to_string(e.raw_size) +
                                                " bytes is over the limit of " +
                                                std::to_string(limits.max_entry_bytes));
  }
  if (*image_length > r.remaining()) return corrupt("its image runs past its length");
  auto image = r.bytes(static_cast<std::size_t>(*image_length), "image");
  if (!image) return as_corrupt(image.error());
  if (e.codec == k_codec_raw) {
    if (image->size() != e.raw_size) {
      return corrupt("image: " + std::to_string(image->size()) + " bytes, raw_size says " + std::to_string(e.raw_size));
    }
  } else {
    // Only the frame's header here: decoding is check_image's, which a caller may skip for an
    // entry it will not import (bundle_reader.hpp).
    JITCACHE_TRY(check_zstd_frame(*image, e.raw_size, limits.max_entry_bytes, "image"));
  }
  e.image.assign(image->begin(), image->end());

  auto source_codec = r.u8("source codec");
  auto source_raw = r.u64("source raw size");
  auto source_length = r.u64("source length");
  if (!source_codec || !source_raw || !source_length) return corrupt("its fields run past its length");
  if (*source_length > r.remaining()) return corrupt("its source runs past its length");
  auto source = r.bytes(static_cast<std::size_t>(*source_length), "source");
  if (!source) return as_corrupt(source.error());
  if (*source_codec == k_codec_raw) {
    if (*source_raw != 0 || !source->empty()) return corrupt("source: codec 0 (none) with a size or bytes");
  } else if (*source_codec == k_codec_zstd) {
    JITCACHE_TRY(check_zstd_frame(*source, *source_raw, limits.max_entry_bytes, "source"));
    e.source_raw_size = *source_raw;
    e.source.assign(source->begin(), source->end());
  } else {
    return corrupt("source codec " + std::to_string(*source_codec) + " is not known");
  }
  if (auto end = r.expect_end("the entry"); !end) return corrupt(end.error().message);
  return e;
}

common::Result<void> BundleReader::read_trailer() {
  auto fail = [](std::string message) { return corrupt("trailer: " + std::move(message)); };
  if (m_source->remaining() < k_trailer_size) {
    return fail("the file ends " + std::to_string(k_trailer_size - m_source->remaining()) +
                " bytes short of the trailer: truncated");
  }
  if (m_source->remaining() > k_trailer_size) {
    return fail(std::to_string(m_source->remaining() - k_trailer_size) +
                " bytes more than the header's entries and the trailer: bytes after the entries");
  }
  std::array<std::uint8_t, 12> start{};
  JITCACHE_TRY(read(start));
  if (!std::equal(k_trailer_magic.begin(), k_trailer_magic.end(), start.begin())) {
    return fail("bad magic (the entries end elsewhere than the header says)");
  }
  if (le64(start.data() + 4) != m_header.entry_count) return fail("its entry count is not the header's");
  const proto::Digest256 computed = m_hash.digest();
  std::array<std::uint8_t, 32> stored{};
  JITCACHE_TRY(m_source->read_exactly(stored));
  if (!std::equal(stored.begin(), stored.end(), computed.bytes.begin())) {
    return fail("the digest does not match the bytes: the bundle was changed");
  }
  proto::Signature signature{};
  JITCACHE_TRY(m_source->read_exactly(signature));
  m_digest = computed;
  if (!m_header.is_signed()) {
    if (std::any_of(signature.begin(), signature.end(), [](std::uint8_t b) { return b != 0; })) {
      return fail("an unsigned bundle with a signature");
    }
    return {};
  }
  std::string message(k_signature_context);
  message.append(reinterpret_cast<const char*>(computed.bytes.data()), computed.bytes.size());
  proto::PublicKey key;
  key.raw = m_header.signer_key;
  if (!key.verifies(message, signature)) {
    return fail("the signature by " + proto::signer_hex(key.id()) + " does not verify: the bundle was changed");
  }
  return {};
}

}  // namespace jitcache::daemon::bundle
