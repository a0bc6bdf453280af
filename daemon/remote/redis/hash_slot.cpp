#include <daemon/remote/redis/hash_slot.hpp>

#include <array>

namespace jitcache::daemon::remote {

namespace {

constexpr std::uint16_t k_polynomial = 0x1021;

// One entry per value of the byte entering the high end of the register.
constexpr std::array<std::uint16_t, 256> make_table() {
  std::array<std::uint16_t, 256> table{};
  for (unsigned byte = 0; byte < 256; ++byte) {
    std::uint16_t crc = static_cast<std::uint16_t>(byte << 8);
    for (int bit = 0; bit < 8; ++bit) {
      crc = static_cast<std::uint16_t>((crc & 0x8000U) != 0 ? (crc << 1) ^ k_polynomial : crc << 1);
    }
    table[byte] = crc;
  }
  return table;
}

constexpr auto k_table = make_table();

}  // namespace

std::uint16_t crc16_xmodem(std::string_view bytes) {
  std::uint16_t crc = 0;
  for (const char c : bytes) {
    const auto index = static_cast<std::uint8_t>((crc >> 8) ^ static_cast<std::uint8_t>(c));
    crc = static_cast<std::uint16_t>((crc << 8) ^ k_table[index]);
  }
  return crc;
}

std::string_view hash_tag(std::string_view key) {
  const auto open = key.find('{');
  if (open == std::string_view::npos) return key;
  const auto close = key.find('}', open + 1);
  if (close == std::string_view::npos || close == open + 1) return key;
  return key.substr(open + 1, close - open - 1);
}

int key_hash_slot(std::string_view key) { return crc16_xmodem(hash_tag(key)) % k_hash_slot_count; }

}  // namespace jitcache::daemon::remote
