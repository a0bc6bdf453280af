// libFuzzer target: the payload decoders without the framing. Input: one byte naming the op whose
// request decoder the daemon would pick, then the payload; every reply decoder also reads the payload.
//
// Rationale: fuzz_frame_decoder feeds the same decoders through the daemon's framing, where growing a
// field needs the payload_length in the header to follow; here it does not, so mutations that change
// a field's length reach the decoders' limit and round-trip checks far more often.
//
// Properties checked (abort() on violation, so the fuzzer reports the input):
//   - nothing reads out of bounds, leaks or hits UB (ASan, UBSan, LeakSanitizer);
//   - every payload passes the round-trip checks of message_round_trip.hpp.
#include "message_round_trip.hpp"

#include <cstdint>

using namespace jitcache::proto;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const auto op = static_cast<Op>(data[0]);
  const Bytes payload(data + 1, size - 1);
  fuzz::check_request_decoder(op, payload);
  fuzz::check_reply_decoders(payload);
  return 0;
}
