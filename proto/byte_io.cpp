#include <proto/byte_io.hpp>

#include <algorithm>
#include <common/result.hpp>
#include <string>

namespace jitcache::proto {

common::Result<Bytes> ByteReader::take(std::size_t n, std::string_view field) {
  if (n > remaining()) {
    return common::make_error(common::ErrorCode::invalid_argument, "payload ends inside field " + std::string(field) +
                                                                       " (needs " + std::to_string(n) + " bytes, " +
                                                                       std::to_string(remaining()) + " left)");
  }
  Bytes out = m_data.subspan(m_offset, n);
  m_offset += n;
  return out;
}

common::Result<std::int64_t> ByteReader::i64(std::string_view field) {
  JITCACHE_TRY_ASSIGN(const std::uint64_t v, get_le<std::uint64_t>(field));
  return static_cast<std::int64_t>(v);
}

common::Result<Digest256> ByteReader::digest(std::string_view field) {
  JITCACHE_TRY_ASSIGN(const Bytes bytes, take(32, field));
  Digest256 d;
  std::copy(bytes.begin(), bytes.end(), d.bytes.begin());
  return d;
}

common::Result<Checksum128> ByteReader::checksum(std::string_view field) {
  JITCACHE_TRY_ASSIGN(const Bytes bytes, take(16, field));
  Checksum128 c;
  std::copy(bytes.begin(), bytes.end(), c.bytes.begin());
  return c;
}

common::Result<std::string_view> ByteReader::str16(std::string_view field, std::size_t max_length) {
  auto length = u16(field);
  JITCACHE_TRY(length);
  if (*length > max_length) {
    return common::make_error(common::ErrorCode::too_large, "field " + std::string(field) + " is " +
                                                                std::to_string(*length) + " bytes; the limit is " +
                                                                std::to_string(max_length));
  }
  auto bytes = take(*length, field);
  JITCACHE_TRY(bytes);
  // Rationale: PROTOCOL.md §4 forbids NUL in a str16; one that got through would be cut short by any
  // C-string consumer (SQLite text, logs, the C API) and so mean different things in different places.
  if (std::find(bytes->begin(), bytes->end(), std::uint8_t{0}) != bytes->end()) {
    return common::make_error(common::ErrorCode::invalid_argument,
                              "field " + std::string(field) + " contains a NUL byte");
  }
  return std::string_view(reinterpret_cast<const char*>(bytes->data()), bytes->size());
}

common::Result<Bytes> ByteReader::blob32(std::string_view field) {
  JITCACHE_TRY_ASSIGN(const std::uint32_t length, u32(field));
  return take(length, field);
}

common::Result<void> ByteReader::expect_end(std::string_view what) const {
  if (remaining() != 0) {
    return common::make_error(common::ErrorCode::invalid_argument, std::to_string(remaining()) +
                                                                       " unexpected bytes after the last field of " +
                                                                       std::string(what));
  }
  return {};
}

}  // namespace jitcache::proto
