#include <daemon/store/key_id_range.hpp>

#include <string>

namespace jitcache::daemon::store {

namespace {

int hex_digit_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Packs nibbles into bytes, high nibble first; an odd last nibble gets a zero low nibble.
std::vector<std::uint8_t> pack(const std::vector<int>& nibbles) {
  std::vector<std::uint8_t> bytes((nibbles.size() + 1) / 2, 0);
  for (std::size_t i = 0; i < nibbles.size(); ++i) {
    bytes[i / 2] |= static_cast<std::uint8_t>(i % 2 == 0 ? nibbles[i] << 4 : nibbles[i]);
  }
  return bytes;
}

}  // namespace

common::Result<KeyIdRange> key_id_range(std::string_view prefix, std::size_t min_digits) {
  if (prefix.size() < min_digits || prefix.size() > k_max_key_id_prefix_digits) {
    return common::make_error(common::ErrorCode::invalid_argument,
                              "key id prefix \"" + std::string(prefix.substr(0, k_max_key_id_prefix_digits)) +
                                  "\" must have " + std::to_string(min_digits) + " to " +
                                  std::to_string(k_max_key_id_prefix_digits) + " hex digits");
  }
  std::vector<int> nibbles;
  nibbles.reserve(prefix.size());
  for (char c : prefix) {
    int value = hex_digit_value(c);
    if (value < 0) {
      return common::make_error(common::ErrorCode::invalid_argument,
                                "key id prefix \"" + std::string(prefix) +
                                    "\" contains a character that is not a hex digit");
    }
    nibbles.push_back(value);
  }

  KeyIdRange range;
  range.lo = pack(nibbles);
  // hi: the prefix plus one in its last digit, carrying leftwards. Every key id with the prefix is
  // below it, and every larger key id is at or above it, whatever the remaining digits are.
  std::size_t i = nibbles.size();
  while (i > 0 && nibbles[i - 1] == 0xF) nibbles[--i] = 0;
  if (i == 0) {
    // All f (or empty): no finite successor of that length; 33 bytes of ff sort after every
    // 32-byte key id, so the scan still has an upper bound the index can use.
    range.hi.assign(k_key_id_size + 1, 0xFF);
  } else {
    ++nibbles[i - 1];
    range.hi = pack(nibbles);
  }
  return range;
}

}  // namespace jitcache::daemon::store
