// Frame header tests against proto/PROTOCOL.md §2-§3 and §5: the byte layout is pinned by a
// known-answer array, and every refusal the daemon must make before reading a payload is checked for
// the status, the message and the op/request id it echoes.
#include <catch2/catch.hpp>

#include <proto/messages.hpp>
#include <proto/wire.hpp>

#include <string>

using namespace jitcache::proto;
using namespace jitcache::common;

namespace {

// A LOOKUP request with request id 0x11223344 and a 0x0A0B0C-byte payload. Every multi-byte field
// has distinct bytes so a swapped byte order or a shifted offset changes the array.
constexpr HeaderBytes k_lookup_header_bytes{
    0x4A, 0x43, 0x57, 0x31,                          // magic "JCW1"
    0x01, 0x00,                                      // protocol_version 1
    0x03, 0x00,                                      // op LOOKUP
    0x00, 0x00,                                      // status ok
    0x00, 0x00,                                      // flags
    0x44, 0x33, 0x22, 0x11,                          // request_id
    0x0C, 0x0B, 0x0A, 0x00, 0x00, 0x00, 0x00, 0x00,  // payload_length
};

FrameHeader lookup_header() {
  FrameHeader h;
  h.op = Op::lookup;
  h.request_id = 0x11223344;
  h.payload_length = 0x0A0B0C;
  return h;
}

void require_same_header(const FrameHeader& a, const FrameHeader& b) {
  CHECK(a.version == b.version);
  CHECK(a.op == b.op);
  CHECK(a.status == b.status);
  CHECK(a.flags == b.flags);
  CHECK(a.request_id == b.request_id);
  CHECK(a.payload_length == b.payload_length);
}

// A valid request header with one field overwritten, as a misbehaving client would send it.
HeaderBytes with_field(HeaderBytes raw, std::size_t offset, std::uint16_t value) {
  raw[offset] = static_cast<std::uint8_t>(value & 0xFF);
  raw[offset + 1] = static_cast<std::uint8_t>(value >> 8);
  return raw;
}

}  // namespace

TEST_CASE("wire: a LOOKUP request header encodes to the documented 24 bytes") {
  STATIC_REQUIRE(k_header_size == 24);
  CHECK(encode_header(lookup_header()) == k_lookup_header_bytes);
}

TEST_CASE("wire: the documented header bytes pass the request check and decode to the same fields") {
  FrameHeader out;
  auto error = check_request_header(k_lookup_header_bytes, k_default_max_frame_bytes, out);
  REQUIRE_FALSE(error.has_value());
  require_same_header(out, lookup_header());
}

TEST_CASE("wire: a reply header round-trips through decode_reply_header with its status") {
  FrameHeader reply;
  reply.op = Op::put;
  reply.status = Status::too_large;
  reply.request_id = 0xFFFFFFFF;
  reply.payload_length = 1024;
  HeaderBytes raw = encode_header(reply);
  CHECK(raw[8] == 3);
  CHECK(raw[9] == 0);
  auto decoded = decode_reply_header(raw, 1024);
  REQUIRE(decoded.ok());
  require_same_header(*decoded, reply);
}

TEST_CASE("wire: a header with a bad magic is refused with bad_request and echoes neither op nor request id") {
  HeaderBytes raw = k_lookup_header_bytes;
  raw[3] = '2';  // "JCW2"
  FrameHeader out;
  auto error = check_request_header(raw, k_default_max_frame_bytes, out);
  REQUIRE(error.has_value());
  CHECK(error->status == Status::bad_request);
  CHECK_THAT(error->message, Catch::Contains("magic"));
  CHECK(error->op_echo == 0);
  CHECK(error->request_id_echo == 0);
}

TEST_CASE("wire: a header of protocol version 2 is refused with bad_request naming the version the daemon speaks") {
  FrameHeader out;
  auto error = check_request_header(with_field(k_lookup_header_bytes, 4, 2), k_default_max_frame_bytes, out);
  REQUIRE(error.has_value());
  CHECK(error->status == Status::bad_request);
  CHECK_THAT(error->message, Catch::Contains("version 2") && Catch::Contains("speaks 1"));
  CHECK(error->op_echo == static_cast<std::uint16_t>(Op::lookup));
  CHECK(error->request_id_echo == 0x11223344);
}

TEST_CASE("wire: a request header with the image_fd flag is accepted and keeps it") {
  FrameHeader out;
  auto error =
      check_request_header(with_field(k_lookup_header_bytes, 10, k_flag_image_fd), k_default_max_frame_bytes, out);
  CHECK_FALSE(error.has_value());
  CHECK(out.flags == k_flag_image_fd);
}

TEST_CASE("wire: a request header with any reserved flag bit set is refused with bad_request") {
  // Bits 0 (image_fd) and 1 (request_fd) are known.
  for (unsigned bit = 2; bit < 16; ++bit) {
    CAPTURE(bit);
    FrameHeader out;
    auto error = check_request_header(with_field(k_lookup_header_bytes, 10, static_cast<std::uint16_t>(1u << bit)),
                                      k_default_max_frame_bytes, out);
    REQUIRE(error.has_value());
    CHECK(error->status == Status::bad_request);
    CHECK_THAT(error->message, Catch::Contains("flags"));
    CHECK(error->op_echo == static_cast<std::uint16_t>(Op::lookup));
    CHECK(error->request_id_echo == 0x11223344);
  }
}

TEST_CASE("wire: a request header carrying a non-zero status is refused with bad_request") {
  FrameHeader out;
  auto error = check_request_header(with_field(k_lookup_header_bytes, 8, static_cast<std::uint16_t>(Status::internal)),
                                    k_default_max_frame_bytes, out);
  REQUIRE(error.has_value());
  CHECK(error->status == Status::bad_request);
  CHECK_THAT(error->message, Catch::Contains("status"));
  CHECK(error->op_echo == static_cast<std::uint16_t>(Op::lookup));
  CHECK(error->request_id_echo == 0x11223344);
}

TEST_CASE("wire: a payload length of 2^40 is refused before allocation with too_large") {
  FrameHeader h = lookup_header();
  h.payload_length = 1ull << 40;
  FrameHeader out;
  auto error = check_request_header(encode_header(h), k_default_max_frame_bytes, out);
  REQUIRE(error.has_value());
  CHECK(error->status == Status::too_large);
  CHECK_THAT(error->message, Catch::Contains("1099511627776") && Catch::Contains("67108864"));
  CHECK(error->op_echo == static_cast<std::uint16_t>(Op::lookup));
  CHECK(error->request_id_echo == 0x11223344);
}

TEST_CASE("wire: a payload of exactly max_frame_bytes is accepted and one byte more is too_large") {
  FrameHeader h = lookup_header();
  h.payload_length = k_min_max_frame_bytes;
  FrameHeader out;
  CHECK_FALSE(check_request_header(encode_header(h), k_min_max_frame_bytes, out).has_value());
  CHECK(out.payload_length == k_min_max_frame_bytes);

  h.payload_length = k_min_max_frame_bytes + 1;
  auto error = check_request_header(encode_header(h), k_min_max_frame_bytes, out);
  REQUIRE(error.has_value());
  CHECK(error->status == Status::too_large);
}

TEST_CASE("wire: the largest payload length a header can carry is refused with too_large, not wrapped") {
  FrameHeader h = lookup_header();
  h.payload_length = ~0ull;
  FrameHeader out;
  auto error = check_request_header(encode_header(h), k_default_max_frame_bytes, out);
  REQUIRE(error.has_value());
  CHECK(error->status == Status::too_large);
  CHECK_THAT(error->message, Catch::Contains("18446744073709551615"));
}

TEST_CASE("wire: an unknown or reserved op passes the header check so the daemon answers it and keeps the connection") {
  for (std::uint16_t op : {std::uint16_t{0}, std::uint16_t{8}, std::uint16_t{12}, std::uint16_t{0xFFFF}}) {
    CAPTURE(op);
    FrameHeader out;
    CHECK_FALSE(
        check_request_header(with_field(k_lookup_header_bytes, 6, op), k_default_max_frame_bytes, out).has_value());
    CHECK(static_cast<std::uint16_t>(out.op) == op);
  }
}

TEST_CASE("wire: a reply header with a bad magic, another version or an over-limit payload is refused by the client") {
  FrameHeader reply;
  reply.op = Op::stats;
  reply.payload_length = 100;
  HeaderBytes good = encode_header(reply);

  HeaderBytes bad_magic = good;
  bad_magic[0] = 0;
  auto magic = decode_reply_header(bad_magic, 100);
  REQUIRE_FALSE(magic.ok());
  CHECK(magic.error().code == ErrorCode::corrupt);

  auto version = decode_reply_header(with_field(good, 4, 7), 100);
  REQUIRE_FALSE(version.ok());
  CHECK(version.error().code == ErrorCode::unsupported);
  CHECK_THAT(version.error().message, Catch::Contains("7"));

  auto too_long = decode_reply_header(good, 99);
  REQUIRE_FALSE(too_long.ok());
  CHECK(too_long.error().code == ErrorCode::too_large);
}

TEST_CASE("wire: op and status numbers are the ones PROTOCOL.md fixes") {
  STATIC_REQUIRE(static_cast<int>(Op::hello) == 1);
  STATIC_REQUIRE(static_cast<int>(Op::ping) == 2);
  STATIC_REQUIRE(static_cast<int>(Op::lookup) == 3);
  STATIC_REQUIRE(static_cast<int>(Op::put) == 4);
  STATIC_REQUIRE(static_cast<int>(Op::stats) == 5);
  STATIC_REQUIRE(static_cast<int>(Op::list) == 6);
  STATIC_REQUIRE(static_cast<int>(Op::remove) == 7);
  STATIC_REQUIRE(static_cast<int>(Op::compile) == 8);
  STATIC_REQUIRE(static_cast<int>(Op::report_failure) == 9);
  STATIC_REQUIRE(static_cast<int>(Op::gc) == 10);
  STATIC_REQUIRE(static_cast<int>(Op::verify) == 11);
  STATIC_REQUIRE(static_cast<int>(Op::hit_note) == 12);
  STATIC_REQUIRE(static_cast<int>(Op::remote_check) == 13);
  STATIC_REQUIRE(static_cast<int>(Op::explain) == 14);
  STATIC_REQUIRE(static_cast<int>(Op::misses) == 15);
  STATIC_REQUIRE(static_cast<int>(Op::nvrtc_note) == 18);
  STATIC_REQUIRE(static_cast<int>(Op::nvrtc_compile) == 19);
  STATIC_REQUIRE(static_cast<int>(Status::ok) == 0);
  STATIC_REQUIRE(static_cast<int>(Status::not_found) == 1);
  STATIC_REQUIRE(static_cast<int>(Status::bad_request) == 2);
  STATIC_REQUIRE(static_cast<int>(Status::too_large) == 3);
  STATIC_REQUIRE(static_cast<int>(Status::forbidden) == 4);
  STATIC_REQUIRE(static_cast<int>(Status::busy) == 5);
  STATIC_REQUIRE(static_cast<int>(Status::unavailable) == 6);
  STATIC_REQUIRE(static_cast<int>(Status::internal) == 7);
  STATIC_REQUIRE(static_cast<int>(Status::compile_error) == 8);
  STATIC_REQUIRE(static_cast<int>(Status::cannot_compile) == 9);
  STATIC_REQUIRE(static_cast<int>(Status::worker_failed) == 10);
  STATIC_REQUIRE(static_cast<int>(Status::no_space) == 11);
  STATIC_REQUIRE(k_status_count == 12);
  STATIC_REQUIRE(k_capability_store == 1);
  STATIC_REQUIRE(k_capability_compile == 2);
  STATIC_REQUIRE(k_capability_report_failure == 4);
  STATIC_REQUIRE(k_capability_gc == 8);
  STATIC_REQUIRE(k_capability_fast_key == 32);
  STATIC_REQUIRE(k_capability_image_fd == 64);
  STATIC_REQUIRE(k_capability_verify == 128);
  STATIC_REQUIRE(k_capability_hit_note == 256);
  STATIC_REQUIRE(k_capability_compile_link == 512);
  STATIC_REQUIRE(k_capability_remote_check == 1024);
  STATIC_REQUIRE(k_capability_explain == 2048);
  STATIC_REQUIRE(k_capability_bundles == 4096);
  STATIC_REQUIRE(k_capability_nvrtc_note == 8192);
  STATIC_REQUIRE(k_capability_nvrtc_compile == 16384);
}

TEST_CASE("wire: HELLO to NVRTC_COMPILE are implemented, 0 and 20 are unknown") {
  STATIC_REQUIRE(static_cast<int>(Op::verify) == 11);
  STATIC_REQUIRE(static_cast<int>(Op::hit_note) == 12);
  STATIC_REQUIRE(static_cast<int>(Op::remote_check) == 13);
  STATIC_REQUIRE(static_cast<int>(Op::misses) == 15);
  for (std::uint16_t op : {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}) {
    CAPTURE(op);
    CHECK(is_known_op(op));
    CHECK(is_implemented_op(static_cast<Op>(op)));
  }
  for (std::uint16_t op : {16, 17, 18, 19}) {
    CAPTURE(op);
    CHECK(is_known_op(op));
    CHECK(is_implemented_op(static_cast<Op>(op)));
  }
  CHECK_FALSE(is_known_op(0));
  CHECK_FALSE(is_known_op(20));
  CHECK_FALSE(is_known_op(0xFFFF));
  CHECK_FALSE(is_implemented_op(Op::none));
  CHECK_FALSE(is_implemented_op(static_cast<Op>(20)));
}

TEST_CASE("wire: ops and statuses have the names error messages and stats counters use") {
  CHECK(op_name(Op::lookup) == "LOOKUP");
  CHECK(op_name(Op::compile) == "COMPILE");
  CHECK(op_name(Op::report_failure) == "REPORT_FAILURE");
  CHECK(op_name(Op::hit_note) == "HIT_NOTE");
  CHECK(op_name(Op::remote_check) == "REMOTE_CHECK");
  CHECK(op_name(Op::explain) == "EXPLAIN");
  CHECK(op_name(Op::misses) == "MISSES");
  CHECK(op_name(static_cast<Op>(99)) == "unknown");
  CHECK(status_name(Status::not_found) == "not_found");
  CHECK(status_name(Status::too_large) == "too_large");
  CHECK(status_name(Status::compile_error) == "compile_error");
  CHECK(status_name(Status::cannot_compile) == "cannot_compile");
  CHECK(status_name(Status::worker_failed) == "worker_failed");
  CHECK(status_name(Status::no_space) == "no_space");
  CHECK(status_name(static_cast<Status>(12)) == "unknown");
}

TEST_CASE("wire: encode_frame writes a version-1 header with the payload length, then the payload") {
  Payload payload{1, 2, 3};
  Payload frame = encode_frame(Op::remove, Status::not_found, 42, payload);
  REQUIRE(frame.size() == k_header_size + payload.size());
  HeaderBytes raw{};
  std::copy(frame.begin(), frame.begin() + k_header_size, raw.begin());
  auto header = decode_reply_header(raw, 3);
  REQUIRE(header.ok());
  CHECK(header->op == Op::remove);
  CHECK(header->status == Status::not_found);
  CHECK(header->flags == 0);
  CHECK(header->request_id == 42);
  CHECK(header->payload_length == 3);
  CHECK(Payload(frame.begin() + k_header_size, frame.end()) == payload);
}
