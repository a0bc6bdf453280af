#include <daemon/store/list_cursor.hpp>

#include <array>

namespace jitcache::daemon::store {

namespace {

constexpr std::size_t k_raw_size = 32 + 4;
constexpr std::size_t k_encoded_size = k_raw_size / 3 * 4;  // 36 bytes: exactly 12 groups, no padding
constexpr char k_alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

int alphabet_value(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '-') return 62;
  if (c == '_') return 63;
  return -1;
}

}  // namespace

std::string encode_list_cursor(const ListPosition& position) {
  std::array<std::uint8_t, k_raw_size> raw{};
  for (std::size_t i = 0; i < 32; ++i) raw[i] = position.key_id.bytes[i];
  for (std::size_t i = 0; i < 4; ++i) raw[32 + i] = static_cast<std::uint8_t>(position.namespace_id >> (24 - 8 * i));

  std::string out;
  out.reserve(k_encoded_size);
  for (std::size_t i = 0; i < k_raw_size; i += 3) {
    const std::uint32_t group = std::uint32_t{raw[i]} << 16 | std::uint32_t{raw[i + 1]} << 8 | raw[i + 2];
    for (int shift = 18; shift >= 0; shift -= 6) out.push_back(k_alphabet[(group >> shift) & 0x3F]);
  }
  return out;
}

common::Result<ListPosition> decode_list_cursor(std::string_view cursor) {
  auto invalid = [] {
    return common::make_error(common::ErrorCode::invalid_argument,
                              "invalid LIST cursor: pass the next_cursor of the previous page unchanged");
  };
  if (cursor.size() != k_encoded_size) return invalid();

  std::array<std::uint8_t, k_raw_size> raw{};
  for (std::size_t i = 0, out = 0; i < k_encoded_size; i += 4, out += 3) {
    std::uint32_t group = 0;
    for (std::size_t j = 0; j < 4; ++j) {
      int value = alphabet_value(cursor[i + j]);
      if (value < 0) return invalid();
      group = group << 6 | static_cast<std::uint32_t>(value);
    }
    raw[out] = static_cast<std::uint8_t>(group >> 16);
    raw[out + 1] = static_cast<std::uint8_t>(group >> 8);
    raw[out + 2] = static_cast<std::uint8_t>(group);
  }

  ListPosition position;
  for (std::size_t i = 0; i < 32; ++i) position.key_id.bytes[i] = raw[i];
  for (std::size_t i = 0; i < 4; ++i) position.namespace_id = position.namespace_id << 8 | raw[32 + i];
  return position;
}

}  // namespace jitcache::daemon::store
