// The bundle file (docs/bundle-format.md) written by BundleWriter and read back by BundleReader:
// a round trip keeps every field, and a reader given a flipped byte anywhere, a cut at any length,
// or a length over its limit refuses the bundle and says which check failed.
#include <catch2/catch.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include <daemon/bundle/bundle_reader.hpp>
#include <daemon/bundle/bundle_writer.hpp>
#include <daemon/bundle/zstd_frame.hpp>
#include <proto/signing.hpp>
#include <tests/support/sample_entries.hpp>

using namespace jitcache;
using namespace jitcache::daemon::bundle;

namespace {

BundleEntry sample_entry(std::uint64_t seed, bool zstd, bool with_source) {
  BundleEntry e;
  e.key = testing::sample_key(seed);
  e.content_fast = testing::sample_content_fast(seed);
  e.producer = "nvJitLink 13.0";
  e.compile_time_us = 1000 + seed;
  e.created_at_ms = 1'700'000'000'000 + static_cast<std::int64_t>(seed);
  const std::vector<std::uint8_t> raw = testing::sample_image(seed, 600);
  e.raw_size = raw.size();
  e.checksum = proto::xxh3_128(raw);
  e.codec = zstd ? k_codec_zstd : k_codec_raw;
  e.image = zstd ? encode_zstd_frame(raw, 3) : raw;
  if (with_source) {
    const std::string ptx = "// PTX of " + std::to_string(seed);
    e.source_raw_size = ptx.size();
    e.source = encode_zstd_frame(proto::as_bytes(ptx), 3);
  }
  return e;
}

std::vector<std::uint8_t> write_bundle(const std::vector<BundleEntry>& entries, const proto::SigningKey* key) {
  std::vector<std::uint8_t> out;
  ByteSink sink = [&out](proto::Bytes bytes) -> common::Result<void> {
    out.insert(out.end(), bytes.begin(), bytes.end());
    return {};
  };
  BundleHeader header;
  header.host = "builder-1";
  header.created_at_ms = 1'700'000'000'000;
  header.entry_count = entries.size();
  header.producer = "jitcached test";
  auto writer = BundleWriter::start(sink, header, key);
  REQUIRE(writer);
  for (const auto& e : entries) REQUIRE(writer->add(e));
  REQUIRE(writer->finish());
  return out;
}

// Reads every entry; the error of the first failed check, or the entries.
common::Result<std::vector<ReadEntry>> read_all(const std::vector<std::uint8_t>& bytes, ReaderLimits limits = {}) {
  MemorySource source{proto::Bytes(bytes)};
  auto reader = BundleReader::open(source, limits);
  JITCACHE_TRY(reader);
  std::vector<ReadEntry> entries;
  for (;;) {
    auto next = reader->next();
    JITCACHE_TRY(next);
    if (!*next) return entries;
    entries.push_back(std::move(**next));
  }
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("bundle: a signed bundle reads back with every field of every entry, raw and zstd, with a source") {
  const auto key = proto::SigningKey::generate();
  const std::vector<BundleEntry> entries{sample_entry(1, false, false), sample_entry(2, true, true),
                                         sample_entry(3, true, false)};
  const auto bytes = write_bundle(entries, &key);
  MemorySource source{proto::Bytes(bytes)};
  auto reader = BundleReader::open(source, {});
  REQUIRE(reader);
  CHECK(reader->header().host == "builder-1");
  CHECK(reader->header().entry_count == 3);
  CHECK(reader->header().signer_key == key.public_key().raw);
  for (const auto& expected : entries) {
    auto next = reader->next();
    REQUIRE(next);
    REQUIRE(next->has_value());
    const BundleEntry& got = (*next)->entry;
    CHECK(got.key == expected.key);
    CHECK(got.content_fast == expected.content_fast);
    CHECK(got.producer == expected.producer);
    CHECK(got.compile_time_us == expected.compile_time_us);
    CHECK(got.created_at_ms == expected.created_at_ms);
    CHECK(got.codec == expected.codec);
    CHECK(got.raw_size == expected.raw_size);
    CHECK(got.origin == expected.origin);
    CHECK(got.checksum == expected.checksum);
    CHECK(got.image == expected.image);
    CHECK(got.source == expected.source);
    CHECK(got.source_raw_size == expected.source_raw_size);
    CHECK(proto::xxh3_128((*next)->raw_image()) == expected.checksum);
  }
  auto end = reader->next();
  REQUIRE(end);
  CHECK_FALSE(end->has_value());
}

TEST_CASE("bundle: an unsigned bundle reads back and says it is unsigned") {
  const auto bytes = write_bundle({sample_entry(4, true, false)}, nullptr);
  MemorySource source{proto::Bytes(bytes)};
  auto reader = BundleReader::open(source, {});
  REQUIRE(reader);
  CHECK_FALSE(reader->header().is_signed());
  auto all = read_all(bytes);
  REQUIRE(all);
  CHECK(all->size() == 1);
}

TEST_CASE("bundle: each entry's origin reads back, and an unknown origin and a version 1 bundle are refused") {
  auto own = sample_entry(7, true, false);
  own.origin = EntryOrigin::caller_namespace;
  const auto bytes = write_bundle({sample_entry(8, false, false), own}, nullptr);
  auto all = read_all(bytes);
  REQUIRE(all);
  REQUIRE(all->size() == 2);
  CHECK((*all)[0].entry.origin == EntryOrigin::shared);
  CHECK((*all)[1].entry.origin == EntryOrigin::caller_namespace);

  // The first entry's origin byte follows the head, the header and the entry's length.
  const std::size_t header_length = bytes[8] | (bytes[9] << 8) | (bytes[10] << 16) | (bytes[11] << 24);
  auto unknown = bytes;
  unknown[k_head_size + header_length + 8] = 7;
  auto refused = read_all(unknown);
  REQUIRE_FALSE(refused);
  CHECK(contains(refused.error().message, "entry 1 of 2: origin 7 is not known"));

  auto version_1 = bytes;
  version_1[4] = 1;
  refused = read_all(version_1);
  REQUIRE_FALSE(refused);
  CHECK(refused.error().code == common::ErrorCode::unsupported);
  CHECK(contains(refused.error().message, "export the entries again"));
}

TEST_CASE("bundle: a deferred image is decoded and checked only by check_image") {
  auto entry = sample_entry(9, true, false);
  entry.checksum.bytes[0] ^= 1;  // a frame that decodes, to bytes that do not match
  const auto bytes = write_bundle({entry}, nullptr);
  MemorySource source{proto::Bytes(bytes)};
  auto reader = BundleReader::open(source, {});
  REQUIRE(reader);
  auto next = reader->next(ImageCheck::deferred);
  REQUIRE(next);
  REQUIRE(next->has_value());
  CHECK((*next)->decoded.empty());
  auto checked = check_image(**next, {});
  REQUIRE_FALSE(checked);
  CHECK(contains(checked.error().message, "checksum"));
  CHECK_FALSE(read_all(bytes));  // a full read checks it at once
}

TEST_CASE("bundle: one byte flipped anywhere in a signed bundle is refused") {
  const auto key = proto::SigningKey::generate();
  const auto bytes = write_bundle({sample_entry(5, false, false), sample_entry(6, true, true)}, &key);
  REQUIRE(read_all(bytes));
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    auto flipped = bytes;
    flipped[i] ^= 0x20;
    CAPTURE(i);
    CHECK_FALSE(read_all(flipped));
  }
}

TEST_CASE("bundle: a bundle cut at any length is refused, and a cut inside an entry names the entry") {
  const auto bytes = write_bundle({sample_entry(7, false, false), sample_entry(8, true, false)}, nullptr);
  for (std::size_t length = 0; length < bytes.size(); ++length) {
    const std::vector<std::uint8_t> cut(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(length));
    CAPTURE(length);
    auto read = read_all(cut);
    REQUIRE_FALSE(read);
  }
  const std::vector<std::uint8_t> mid(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(bytes.size() / 2));
  auto read = read_all(mid);
  REQUIRE_FALSE(read);
  CHECK(contains(read.error().message, "entry "));
  CHECK(contains(read.error().message, "truncated"));
}

TEST_CASE("bundle: the checks name what failed: checksum, signature, bytes after the end, not a bundle") {
  const auto key = proto::SigningKey::generate();
  // A raw image's last byte: the checksum check fails at entry 1.
  auto entry = sample_entry(9, false, false);
  entry.image.back() ^= 1;
  auto bad = read_all(write_bundle({entry}, &key));
  REQUIRE_FALSE(bad);
  CHECK(contains(bad.error().message, "entry 1 of 1: image: the checksum does not match"));

  auto bytes = write_bundle({sample_entry(10, false, false)}, &key);
  auto signature_flipped = bytes;
  signature_flipped.back() ^= 1;
  auto unsigned_read = read_all(signature_flipped);
  REQUIRE_FALSE(unsigned_read);
  CHECK(contains(unsigned_read.error().message, "signature"));

  auto longer = bytes;
  longer.push_back(0);
  auto trailing = read_all(longer);
  REQUIRE_FALSE(trailing);
  CHECK(contains(trailing.error().message, "after the entries"));

  const std::vector<std::uint8_t> garbage(300, 'x');
  auto not_bundle = read_all(garbage);
  REQUIRE_FALSE(not_bundle);
  CHECK(contains(not_bundle.error().message, "not a jitcache bundle"));
}

TEST_CASE("bundle: lengths over the limits are refused before anything is allocated for them") {
  const auto bytes = write_bundle({sample_entry(11, false, false)}, nullptr);
  ReaderLimits small;
  small.max_entry_bytes = 100;
  auto entry = read_all(bytes, small);
  REQUIRE_FALSE(entry);
  CHECK(entry.error().code == common::ErrorCode::too_large);
  CHECK(contains(entry.error().message, "entry 1 of 1"));

  ReaderLimits tiny;
  tiny.max_bundle_bytes = bytes.size() - 1;
  auto whole = read_all(bytes, tiny);
  REQUIRE_FALSE(whole);
  CHECK(whole.error().code == common::ErrorCode::too_large);

  // An entry length of 2^63 in a file of a few hundred bytes: refused, nothing reserved for it.
  auto huge = bytes;
  const std::size_t entry_length_at =
      k_head_size + encode_header(BundleHeader{"builder-1", 0, 1, {}, "jitcached test"}).size();
  for (std::size_t i = 0; i < 8; ++i) huge[entry_length_at + i] = i == 7 ? 0x80 : 0;
  auto declared = read_all(huge);
  REQUIRE_FALSE(declared);
  CHECK(declared.error().code == common::ErrorCode::too_large);
}

TEST_CASE("bundle: a zstd frame must record the declared size and end where its field ends") {
  const std::string text(1000, 'a');
  const auto frame = encode_zstd_frame(proto::as_bytes(text), 3);
  CHECK(check_zstd_frame(proto::Bytes(frame), 1000, 1 << 20, "image"));
  auto other = check_zstd_frame(proto::Bytes(frame), 999, 1 << 20, "image");
  REQUIRE_FALSE(other);
  CHECK(contains(other.error().message, "holds 1000 bytes"));
  auto over = check_zstd_frame(proto::Bytes(frame), 1000, 999, "image");
  REQUIRE_FALSE(over);
  CHECK(over.error().code == common::ErrorCode::too_large);
  auto longer = frame;
  longer.push_back(0);
  CHECK_FALSE(check_zstd_frame(proto::Bytes(longer), 1000, 1 << 20, "image"));
}

TEST_CASE("bundle: a reader over a copying source hands the copy every byte of the bundle, in order") {
  const auto key = proto::SigningKey::generate();
  const auto bytes = write_bundle({sample_entry(12, true, true), sample_entry(13, false, false)}, &key);
  MemorySource inner{proto::Bytes(bytes)};
  std::vector<std::uint8_t> copy;
  CopyingSource copying(inner, [&copy](std::span<const std::uint8_t> part) -> common::Result<void> {
    copy.insert(copy.end(), part.begin(), part.end());
    return {};
  });
  auto reader = BundleReader::open(copying, {});
  REQUIRE(reader);
  for (;;) {
    auto next = reader->next();
    REQUIRE(next);
    if (!*next) break;
  }
  CHECK(copy == bytes);
  // The copy reads back as the same bundle.
  auto again = read_all(copy);
  REQUIRE(again);
  CHECK(again->size() == 2);
}
