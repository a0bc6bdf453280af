// libFuzzer target: the payload decoders without the framing. Input: one byte naming the op whose
// request decoder the daemon would pick, then the payload; every reply decoder also reads the payload.
//
// Rationale: fuzz_frame_decoder feeds the same decoders through the daemon's framing, where growing a
// field also needs the header's payload_length to follow. Here nothing outside the payload has to
// agree, and a custom mutator adds the one edit byte-level mutations rarely make: grow or shrink a
// length-prefixed field together with its length, so inputs cross str16 and blob32 limits by a byte
// and still parse to the end.
//
// Properties checked (abort() on violation, so the fuzzer reports the input):
//   - nothing reads out of bounds, leaks or hits UB (ASan, UBSan, LeakSanitizer);
//   - every payload passes the round-trip checks of message_round_trip.hpp.
#include <tests/fuzz/message_round_trip.hpp>

#include <cstdint>
#include <cstring>
#include <random>
#include <string_view>
#include <vector>

using namespace jitcache::proto;

extern "C" std::size_t LLVMFuzzerMutate(std::uint8_t* data, std::size_t size, std::size_t max_size);

namespace {

constexpr std::string_view k_fill_bytes = "0123456789abcdef";  // valid in every str16, hex included
constexpr int k_max_resize = 16;

std::uint32_t read_le(const std::uint8_t* p, std::size_t width) {
  std::uint32_t v = 0;
  for (std::size_t i = 0; i < width; ++i) v |= static_cast<std::uint32_t>(p[i]) << (8 * i);
  return v;
}

void write_le(std::uint8_t* p, std::size_t width, std::uint32_t v) {
  for (std::size_t i = 0; i < width; ++i) p[i] = static_cast<std::uint8_t>(v >> (8 * i));
}

// Picks a u16 or u32 that could be a length (no larger than the bytes after it), changes it by a small
// delta and inserts or removes that many bytes right after it, so every later field keeps its position
// relative to the end. Returns 0 when no spot can take the change.
std::size_t resize_length_prefixed_field(std::uint8_t* data, std::size_t size, std::size_t max_size,
                                         std::minstd_rand& rng) {
  const std::size_t width = rng() % 2 == 0 ? 2 : 4;
  std::vector<std::size_t> candidates;
  for (std::size_t offset = 1; offset + width <= size; ++offset) {  // data[0] is the op
    if (read_le(data + offset, width) <= size - offset - width) candidates.push_back(offset);
  }
  if (candidates.empty()) return 0;
  const std::size_t offset = candidates[rng() % candidates.size()];
  const std::size_t body = offset + width;
  const std::uint32_t length = read_le(data + offset, width);
  int delta = static_cast<int>(rng() % (2 * k_max_resize + 1)) - k_max_resize;
  if (delta == 0) delta = 1;
  if (delta > 0) {
    const auto grow = static_cast<std::size_t>(delta);
    if (size + grow > max_size || (width == 2 && length + grow > 0xFFFF)) return 0;
    std::memmove(data + body + grow, data + body, size - body);
    for (std::size_t i = 0; i < grow; ++i) data[body + i] = static_cast<std::uint8_t>(k_fill_bytes[rng() % 16]);
    write_le(data + offset, width, length + static_cast<std::uint32_t>(grow));
    return size + grow;
  }
  const auto shrink = static_cast<std::size_t>(-delta);
  if (shrink > length || body + shrink > size) return 0;
  std::memmove(data + body, data + body + shrink, size - body - shrink);
  write_le(data + offset, width, length - static_cast<std::uint32_t>(shrink));
  return size - shrink;
}

}  // namespace

extern "C" std::size_t LLVMFuzzerCustomMutator(std::uint8_t* data, std::size_t size, std::size_t max_size,
                                               unsigned int seed) {
  std::minstd_rand rng(seed);
  if (rng() % 2 == 0) {
    if (std::size_t resized = resize_length_prefixed_field(data, size, max_size, rng); resized != 0) return resized;
  }
  return LLVMFuzzerMutate(data, size, max_size);
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const auto op = static_cast<Op>(data[0]);
  const Bytes payload(data + 1, size - 1);
  fuzz::check_request_decoder(op, payload);
  fuzz::check_reply_decoders(payload);
  return 0;
}
