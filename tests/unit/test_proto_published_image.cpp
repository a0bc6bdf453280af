// The published image file format (proto/published_image.hpp, PROTOCOL.md §8): what the daemon
// writes is what the client decodes, with the LOOKUP reply codec, and anything else is refused.
#include <catch2/catch.hpp>

#include <algorithm>

#include <proto/jit_options.hpp>
#include <proto/published_image.hpp>

#include <tests/support/sample_entries.hpp>

using namespace jitcache;
using namespace jitcache::proto;

namespace {

struct Sample {
  FastKey fast_key = fast_key_of(testing::sample_key(7), xxh3_128(as_bytes("ptx 7")));
  std::vector<std::uint8_t> image = testing::sample_image(7, 300);
  EntryInfo info = [this] {
    EntryInfo e;
    e.key = testing::sample_key(7);
    e.key_id = key_id(e.key);
    e.producer = "nvJitLink 13.0";
    e.raw_size = image.size();
    e.stored_size = image.size();
    e.checksum = xxh3_128(Bytes(image));
    e.created_at_ms = 1'700'000'000'000;
    e.last_used_at_ms = 1'700'000'000'001;
    e.compile_time_us = 1234;
    return e;
  }();
  Payload file() const { return encode_published_image(fast_key, info, Bytes(image)); }
};

}  // namespace

TEST_CASE("published image: a file decodes to its fast key, entry and image") {
  const Sample s;
  const Payload file = s.file();
  auto decoded = decode_published_image(Bytes(file));
  REQUIRE(decoded);
  CHECK(decoded->fast_key == s.fast_key);
  CHECK(decoded->reply.info.key == s.info.key);
  CHECK(decoded->reply.info.checksum == s.info.checksum);
  CHECK(decoded->reply.info.compile_time_us == 1234);
  CHECK(std::vector<std::uint8_t>(decoded->reply.image.begin(), decoded->reply.image.end()) == s.image);
}

namespace {

// The file as format 1 wrote it: no pad before the fast key.
Payload unpadded_file(const Sample& s) {
  Payload file(k_published_magic.begin(), k_published_magic.end());
  ByteWriter w(file);
  w.u16(k_published_format_unpadded);
  encode_fast_key(w, s.fast_key);
  const Payload reply = encode_lookup_reply_head(s.info, static_cast<std::uint32_t>(s.image.size()));
  w.raw(Bytes(reply));
  w.raw(Bytes(s.image));
  return file;
}

}  // namespace

TEST_CASE("published image: after magic, version, pad and fast key comes exactly a LOOKUP reply payload") {
  const Sample s;
  const Payload file = s.file();
  Payload fast_key_bytes;
  ByteWriter w(fast_key_bytes);
  encode_fast_key(w, s.fast_key);
  REQUIRE(file.size() > 8);
  CHECK(std::equal(file.begin(), file.begin() + 4, k_published_magic.begin()));
  CHECK(file[4] == 2);
  CHECK(file[5] == 0);
  const std::size_t pad = file[6] | (file[7] << 8);
  CHECK(pad < k_published_image_alignment);
  CHECK(std::all_of(file.begin() + 8, file.begin() + 8 + static_cast<std::ptrdiff_t>(pad),
                    [](std::uint8_t b) { return b == 0; }));
  const std::size_t head = 8 + pad + fast_key_bytes.size();
  REQUIRE(file.size() > head);
  CHECK(Payload(file.begin() + 8 + static_cast<std::ptrdiff_t>(pad),
                file.begin() + static_cast<std::ptrdiff_t>(head)) == fast_key_bytes);
  Payload reply = encode_lookup_reply_head(s.info, static_cast<std::uint32_t>(s.image.size()));
  reply.insert(reply.end(), s.image.begin(), s.image.end());
  CHECK(Payload(file.begin() + static_cast<std::ptrdiff_t>(head), file.end()) == reply);
  CHECK(decode_lookup_reply(Bytes(file).subspan(head)));
}

TEST_CASE("published image: the image starts at a multiple of the alignment, whatever the entry's text lengths") {
  Sample s;
  for (std::size_t producer_length = 0; producer_length < 2 * k_published_image_alignment; ++producer_length) {
    INFO("producer of " << producer_length << " bytes");
    s.info.producer = std::string(producer_length, 'p');
    const Payload file = s.file();
    auto decoded = decode_published_image(Bytes(file));
    REQUIRE(decoded);
    const auto offset = static_cast<std::size_t>(decoded->reply.image.data() - file.data());
    CHECK(offset % k_published_image_alignment == 0);
    CHECK(offset + s.image.size() == file.size());
    CHECK(encode_published_image_head(s.fast_key, s.info, static_cast<std::uint32_t>(s.image.size())).size() == offset);
  }
}

TEST_CASE("published image: a format 1 file (no pad) is still read") {
  const Sample s;
  const Payload file = unpadded_file(s);
  auto decoded = decode_published_image(Bytes(file));
  REQUIRE(decoded);
  CHECK(decoded->fast_key == s.fast_key);
  CHECK(std::vector<std::uint8_t>(decoded->reply.image.begin(), decoded->reply.image.end()) == s.image);
}

TEST_CASE("published image: a pad that is not zeros, is as long as the alignment or misaligns the image is refused") {
  Sample s;
  // Find a producer length that gives a pad of at least one byte, with room for one more.
  Payload file;
  for (std::size_t n = 0; n < k_published_image_alignment; ++n) {
    s.info.producer = std::string(n, 'p');
    file = s.file();
    if (file[6] != 0 && std::size_t{file[6]} + 1 < k_published_image_alignment) break;
  }
  REQUIRE(file[6] != 0);
  REQUIRE(std::size_t{file[6]} + 1 < k_published_image_alignment);
  Payload dirty = file;
  dirty[8] = 1;
  auto refused = decode_published_image(Bytes(dirty));
  REQUIRE_FALSE(refused);
  CHECK_THAT(refused.error().message, Catch::Contains("not zeros"));

  Payload long_pad = file;
  long_pad[6] = static_cast<std::uint8_t>(k_published_image_alignment);
  long_pad[7] = 0;
  long_pad.insert(long_pad.begin() + 8, k_published_image_alignment, 0);
  refused = decode_published_image(Bytes(long_pad));
  REQUIRE_FALSE(refused);
  CHECK_THAT(refused.error().message, Catch::Contains("longer than its alignment"));

  // A pad one byte longer (still zeros, still short) moves the image off its alignment.
  Payload misaligned = file;
  misaligned[6] = static_cast<std::uint8_t>(misaligned[6] + 1);
  misaligned.insert(misaligned.begin() + 8, 1, 0);
  refused = decode_published_image(Bytes(misaligned));
  REQUIRE_FALSE(refused);
  CHECK_THAT(refused.error().message, Catch::Contains("does not align"));
}

TEST_CASE("published image: a wrong magic, another version, a truncated file or trailing bytes are refused") {
  const Sample s;
  Payload file = s.file();

  Payload wrong_magic = file;
  wrong_magic[3] = 'X';
  CHECK_FALSE(decode_published_image(Bytes(wrong_magic)));

  for (std::uint8_t version : {std::uint8_t{0}, std::uint8_t{3}}) {
    Payload other_version = file;
    other_version[4] = version;
    auto refused = decode_published_image(Bytes(other_version));
    REQUIRE_FALSE(refused);
    CHECK_THAT(refused.error().message, Catch::Contains("format " + std::to_string(version)));
  }

  for (std::size_t cut :
       {std::size_t{0}, std::size_t{3}, std::size_t{7}, std::size_t{10}, file.size() / 2, file.size() - 1}) {
    INFO("cut at " << cut);
    CHECK_FALSE(decode_published_image(Bytes(file).first(cut)));
  }

  Payload trailing = file;
  trailing.push_back(0);
  CHECK_FALSE(decode_published_image(Bytes(trailing)));
}

TEST_CASE(
    "published image: the directory is the socket path plus .published, files are the lowercase hex fast key id") {
  CHECK(published_dir_for("/run/jitcache/jitcached.sock") == "/run/jitcache/jitcached.sock.published");
  const Sample s;
  const std::string name = published_file_name(fast_key_id(s.fast_key));
  CHECK(name.size() == 64);
  CHECK(name.find_first_not_of("0123456789abcdef") == std::string::npos);
}
