// libFuzzer target: bytes as they arrive on the daemon's socket, framed and decoded the way the
// daemon does it, and every payload also fed to the client's reply decoders.
//
// Properties checked (abort() on violation, so the fuzzer reports the input):
//   - nothing reads out of bounds, leaks or hits UB (ASan, UBSan, LeakSanitizer);
//   - a refused header yields bad_request or too_large, and the error reply built from it is
//     readable by a client;
//   - every decoded payload passes the round-trip checks of message_round_trip.hpp;
//   - the client's reply header decoder, fed the same headers, refuses with a message or accepts
//     nothing longer than its limit.
//
// Growing a field here takes three matching edits (the bytes, the field's length, payload_length),
// which mutations rarely make at once; fuzz_payload_decoders drops the framing for that reason.
#include <tests/fuzz/message_round_trip.hpp>

#include <proto/messages.hpp>
#include <proto/wire.hpp>

#include <algorithm>
#include <cstdint>

using namespace jitcache::proto;
using namespace jitcache::common;

namespace {

// Rationale: the smallest max_frame_bytes a daemon may run with (PROTOCOL.md §6); it keeps inputs
// that pass the header check within reach of the fuzzer's input sizes.
constexpr std::uint64_t k_fuzz_max_frame_bytes = k_min_max_frame_bytes;

// What the daemon sends for a refused header must be a reply a client can read and explain.
void check_error_reply(const HeaderError& error) {
  if (error.status != Status::bad_request && error.status != Status::too_large) {
    fuzz::fail("a refused header maps to a status other than bad_request or too_large");
  }
  const Payload frame = encode_frame(static_cast<Op>(error.op_echo), error.status, error.request_id_echo,
                                     encode_error_message(error.message));
  HeaderBytes raw{};
  std::copy_n(frame.begin(), k_header_size, raw.begin());
  auto header = decode_reply_header(raw, k_fuzz_max_frame_bytes);
  if (!header) fuzz::fail("the error reply to a refused header has an unreadable header");
  if (header->status != error.status || static_cast<std::uint16_t>(header->op) != error.op_echo ||
      header->request_id != error.request_id_echo) {
    fuzz::fail("the error reply's header does not carry the refusal's status, op and request id");
  }
  auto message = decode_error_message(Bytes(frame).subspan(k_header_size));
  if (!message) fuzz::fail("the error reply to a refused header has an unreadable message");
  if (message->empty() || error.message.compare(0, message->size(), *message) != 0) {
    fuzz::fail("the error reply's message is not the refusal's message");
  }
}

// The client reads headers a confused or hostile daemon may send (transport/unix_connection.cpp).
void check_reply_header(const HeaderBytes& raw) {
  auto header = decode_reply_header(raw, k_fuzz_max_frame_bytes);
  if (!header) {
    const ErrorCode code = header.error().code;
    if (code != ErrorCode::corrupt && code != ErrorCode::unsupported && code != ErrorCode::too_large) {
      fuzz::fail("a refused reply header is not corrupt, unsupported or too_large");
    }
    if (header.error().message.empty()) fuzz::fail("a refused reply header has no message");
    return;
  }
  if (header->payload_length > k_fuzz_max_frame_bytes) fuzz::fail("an accepted reply header exceeds its limit");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  Bytes stream(data, size);
  // A connection carries any number of frames; the daemon reads them in turn until it must close.
  while (stream.size() >= k_header_size) {
    HeaderBytes raw{};
    std::copy_n(stream.begin(), k_header_size, raw.begin());
    stream = stream.subspan(k_header_size);
    check_reply_header(raw);

    FrameHeader header;
    if (auto error = check_request_header(raw, k_fuzz_max_frame_bytes, header)) {
      check_error_reply(*error);
      return 0;  // the daemon closes the connection after this reply
    }
    if (header.payload_length > k_fuzz_max_frame_bytes) fuzz::fail("an accepted header exceeds max_frame_bytes");
    if (stream.size() < header.payload_length) return 0;  // the rest never arrives: read deadline
    const Bytes payload = stream.first(static_cast<std::size_t>(header.payload_length));
    stream = stream.subspan(payload.size());

    fuzz::check_request_decoder(header.op, payload);
    fuzz::check_reply_decoders(payload);
  }
  return 0;
}
