// The image object (daemon/remote/record/image_object.hpp, docs/remote-layout.md "Image object"):
// what a builder uploads decodes to the image its record names; a truncated, damaged or replaced
// object is refused for its reason, and no object makes the decoder allocate more than the record's
// image_size, whatever its frame claims.
#include <catch2/catch.hpp>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <new>
#include <string>
#include <variant>
#include <vector>

#include <daemon/remote/record/image_object.hpp>
#include <daemon/remote/record/index_record.hpp>

#include <tests/support/remote_records.hpp>

using namespace jitcache;
using namespace jitcache::daemon::remote;
using namespace jitcache::testing;

// Rationale: "never allocates the claimed size" is checked where it happens, in operator new: this
// test executable's replacement records the largest single allocation made while `g_watching` is
// set (zstd's own context comes from malloc and is not counted; it does not grow with the frame).
namespace {
std::atomic<bool> g_watching{false};
std::atomic<std::size_t> g_largest{0};
void* allocate(std::size_t size) {
  if (g_watching.load(std::memory_order_relaxed) && size > g_largest.load(std::memory_order_relaxed)) {
    g_largest.store(size, std::memory_order_relaxed);
  }
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
}  // namespace

void* operator new(std::size_t size) { return allocate(size); }
void* operator new[](std::size_t size) { return allocate(size); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }

namespace {

// The largest allocation `body` makes.
template <class Body>
std::size_t largest_allocation_of(Body&& body) {
  g_largest = 0;
  g_watching = true;
  body();
  g_watching = false;
  return g_largest;
}

std::string outcome(std::string_view object, const IndexRecord& record) {
  const auto result = decode_image_object(object, record);
  if (const auto* rejected = std::get_if<Rejected>(&result)) return std::string(rejection_name(rejected->reason));
  return "decoded";
}

void put_le(std::string& out, std::uint64_t value, int bytes) {
  for (int i = 0; i < bytes; ++i) out.push_back(static_cast<char>(value >> (8 * i)));
}

// A zstd frame (RFC 8878 §3.1.1) whose header claims `content_size` bytes and whose one block is
// `payload` stored raw: the frame a hostile remote would make to have a decoder allocate.
std::string frame_claiming(std::uint64_t content_size, const std::string& payload) {
  std::string frame;
  put_le(frame, 0xFD2FB528u, 4);                 // magic
  frame.push_back(static_cast<char>(0xC0));      // 8-byte content size, a window descriptor
  frame.push_back(0);                            // window: 1 KiB
  put_le(frame, content_size, 8);                // Frame_Content_Size
  put_le(frame, (payload.size() << 3) | 1u, 3);  // last block, raw, payload.size() bytes
  frame += payload;
  return frame;
}

}  // namespace

TEST_CASE("image object: what encode_image_object makes decodes to the image its record names") {
  for (const std::size_t size : {std::size_t{1}, std::size_t{4096}, std::size_t{300'000}}) {
    INFO("image of " << size << " bytes");
    const RemoteEntry entry = sample_remote_entry(1, size);
    const auto result = decode_image_object(entry.object, entry.record);
    REQUIRE(std::holds_alternative<std::vector<std::uint8_t>>(result));
    CHECK(std::get<std::vector<std::uint8_t>>(result) == entry.image);
    CHECK(entry.record.image_digest == proto::sha256(proto::Bytes(entry.image)));
  }
  // Compressible bytes are compressed (sample images are random, and are not).
  const std::vector<std::uint8_t> zeros(300'000, 0);
  CHECK(encode_image_object(proto::Bytes(zeros)).size() < 1000);
}

TEST_CASE("image object: a truncated, damaged or replaced object is refused for its reason") {
  const RemoteEntry entry = sample_remote_entry(3, 20'000);
  const RemoteEntry other = sample_remote_entry(4, 20'000);
  REQUIRE(outcome(entry.object, entry.record) == "decoded");

  SECTION("truncated at any length: image_corrupt") {
    for (std::size_t length = 0; length < entry.object.size(); length += (length < 64 ? 1 : 97)) {
      INFO("truncated to " << length << " bytes");
      CHECK(outcome(entry.object.substr(0, length), entry.record) == "image_corrupt");
    }
    CHECK(outcome(entry.object.substr(0, entry.object.size() - 1), entry.record) == "image_corrupt");
  }
  SECTION("bytes after the frame, or a second frame: image_corrupt") {
    CHECK(outcome(entry.object + '\0', entry.record) == "image_corrupt");
    CHECK(outcome(entry.object + entry.object, entry.record) == "image_corrupt");
  }
  SECTION("not zstd at all: image_corrupt") {
    CHECK(outcome(std::string(entry.image.begin(), entry.image.end()), entry.record) == "image_corrupt");
    CHECK(outcome("", entry.record) == "image_corrupt");
  }
  SECTION("another image's object (a valid frame of the same size): image_mismatch") {
    REQUIRE(other.record.image_size == entry.record.image_size);
    IndexRecord same_object_size = entry.record;
    same_object_size.object_size = other.object.size();
    CHECK(outcome(other.object, same_object_size) == "image_mismatch");
    CHECK(outcome(other.object, entry.record) == "image_mismatch");
  }
  SECTION("an object of another image size: image_mismatch") {
    const RemoteEntry smaller = sample_remote_entry(3, 10'000);
    CHECK(outcome(smaller.object, entry.record) == "image_mismatch");
  }
  SECTION("a record naming another digest: image_mismatch") {
    IndexRecord wrong_digest = entry.record;
    wrong_digest.image_digest.bytes[0] ^= 1;
    CHECK(outcome(entry.object, wrong_digest) == "image_mismatch");
  }
  SECTION("a record naming another object size: image_mismatch") {
    IndexRecord wrong_object_size = entry.record;
    wrong_object_size.object_size += 1;
    CHECK(outcome(entry.object, wrong_object_size) == "image_mismatch");
  }
  SECTION("a frame whose blocks hold less than its header says: image_corrupt") {
    const std::string payload(100, 'x');
    IndexRecord record = entry.record;
    record.image_size = 200;
    record.object_size = frame_claiming(200, payload).size();
    CHECK(outcome(frame_claiming(200, payload), record) == "image_corrupt");
  }
  SECTION("a bit flipped in the compressed bytes: image_corrupt or image_mismatch, never the image") {
    for (std::size_t at = 20; at < entry.object.size(); at += 331) {
      INFO("bit flipped in byte " << at);
      const std::string got = outcome(flip_bit(entry.object, at * 8 + 2), entry.record);
      CHECK((got == "image_corrupt" || got == "image_mismatch"));
    }
  }
}

TEST_CASE("image object: a frame claiming 4 GiB is refused without allocating it") {
  const std::string payload(16, 'x');
  const std::string frame = frame_claiming(4ull << 30, payload);

  SECTION("under a record of a small image: image_mismatch") {
    const RemoteEntry entry = sample_remote_entry(5, 4096);
    IndexRecord record = entry.record;
    record.object_size = frame.size();
    std::string got;
    const std::size_t largest = largest_allocation_of([&] { got = outcome(frame, record); });
    CHECK(got == "image_mismatch");
    CHECK(largest < (1u << 20));
  }
  SECTION("under a record that claims 4 GiB too (never through verify_record, which refuses it): image_too_large") {
    IndexRecord record = sample_remote_entry(6, 4096).record;
    record.image_size = 4ull << 30;
    record.object_size = frame.size();
    std::string got;
    const std::size_t largest = largest_allocation_of([&] { got = outcome(frame, record); });
    CHECK(got == "image_too_large");
    CHECK(largest < (1u << 20));
  }
  SECTION("the record claiming 4 GiB is refused by verify_record before any image is read") {
    const proto::SigningKey key = proto::SigningKey::generate();
    RemoteEntry entry = sample_remote_entry(7, 4096);
    entry.record.image_size = 4ull << 30;
    entry.record.object_size = frame.size();
    const std::string bytes = signed_record(entry, key);
    const TrustedKeys trusted = trusting({&key});
    std::string got;
    const std::size_t largest = largest_allocation_of([&] {
      const auto result = verify_record(bytes, trusted, entry.expect_key_id(), 64ull << 20);
      got = std::holds_alternative<Rejected>(result) ? std::string(rejection_name(std::get<Rejected>(result).reason))
                                                     : "accepted";
    });
    CHECK(got == "image_too_large");
    CHECK(largest < (64u << 10));
  }
}

TEST_CASE("image object: the watch on allocations sees the image buffer of a real decode") {
  // Guards the allocation checks above: were the replacement operator new not in use, they could
  // not fail.
  const RemoteEntry entry = sample_remote_entry(8, 2u << 20);
  const std::size_t largest = largest_allocation_of([&] { CHECK(outcome(entry.object, entry.record) == "decoded"); });
  CHECK(largest >= entry.image.size());
}
