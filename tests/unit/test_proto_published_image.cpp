// The published image file format (proto/published_image.hpp, PROTOCOL.md §8): what the daemon
// writes is what the client decodes, with the LOOKUP reply codec, and anything else is refused.
#include <catch2/catch.hpp>

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

TEST_CASE("published image: after magic, version and fast key comes exactly a LOOKUP reply payload") {
  const Sample s;
  const Payload file = s.file();
  Payload fast_key_bytes;
  ByteWriter w(fast_key_bytes);
  encode_fast_key(w, s.fast_key);
  const std::size_t head = 4 + 2 + fast_key_bytes.size();
  REQUIRE(file.size() > head);
  CHECK(std::equal(file.begin(), file.begin() + 4, k_published_magic.begin()));
  CHECK(file[4] == 1);
  CHECK(file[5] == 0);
  Payload reply = encode_lookup_reply_head(s.info, static_cast<std::uint32_t>(s.image.size()));
  reply.insert(reply.end(), s.image.begin(), s.image.end());
  CHECK(Payload(file.begin() + static_cast<std::ptrdiff_t>(head), file.end()) == reply);
  CHECK(decode_lookup_reply(Bytes(file).subspan(head)));
}

TEST_CASE("published image: a wrong magic, another version, a truncated file or trailing bytes are refused") {
  const Sample s;
  Payload file = s.file();

  Payload wrong_magic = file;
  wrong_magic[3] = 'X';
  CHECK_FALSE(decode_published_image(Bytes(wrong_magic)));

  Payload other_version = file;
  other_version[4] = 2;
  auto refused = decode_published_image(Bytes(other_version));
  REQUIRE_FALSE(refused);
  CHECK_THAT(refused.error().message, Catch::Contains("format 2"));

  for (std::size_t cut : {std::size_t{0}, std::size_t{3}, std::size_t{10}, file.size() / 2, file.size() - 1}) {
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
