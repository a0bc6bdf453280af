// Bounds-checked little-endian readers and writers for payloads (PROTOCOL.md §4).
//
// ByteReader never reads past its span and returns views into it, so decoding a payload allocates
// nothing: a multi-MB image stays where the socket read put it. Thread safety: one object per thread.
#pragma once

#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <common/result.hpp>
#include <proto/digest.hpp>

namespace jitcache::proto {

class ByteWriter {
 public:
  explicit ByteWriter(std::vector<std::uint8_t>& out) : m_out(out) {}

  void u8(std::uint8_t v) { m_out.push_back(v); }
  void u16(std::uint16_t v) { put_le(v); }
  void u32(std::uint32_t v) { put_le(v); }
  void u64(std::uint64_t v) { put_le(v); }
  void i64(std::int64_t v) { put_le(static_cast<std::uint64_t>(v)); }
  void raw(Bytes bytes) { m_out.insert(m_out.end(), bytes.begin(), bytes.end()); }
  void digest(const Digest256& d) { raw(Bytes(d.bytes)); }
  void checksum(const Checksum128& c) { raw(Bytes(c.bytes)); }
  // The caller guarantees s.size() fits its field's limit (encoders check before calling).
  void str16(std::string_view s) {
    u16(static_cast<std::uint16_t>(s.size()));
    raw(as_bytes(s));
  }
  // Writes only the length of a blob whose bytes travel separately (scatter-gather write).
  void blob32_length(std::uint32_t length) { u32(length); }
  void blob32(Bytes b) {
    u32(static_cast<std::uint32_t>(b.size()));
    raw(b);
  }

 private:
  template <class T>
  void put_le(T v) {
    for (std::size_t i = 0; i < sizeof(T); ++i) m_out.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
  }
  std::vector<std::uint8_t>& m_out;
};

class ByteReader {
 public:
  explicit ByteReader(Bytes data) : m_data(data) {}

  common::Result<std::uint8_t> u8(std::string_view field) { return get_le<std::uint8_t>(field); }
  common::Result<std::uint16_t> u16(std::string_view field) { return get_le<std::uint16_t>(field); }
  common::Result<std::uint32_t> u32(std::string_view field) { return get_le<std::uint32_t>(field); }
  common::Result<std::uint64_t> u64(std::string_view field) { return get_le<std::uint64_t>(field); }
  common::Result<std::int64_t> i64(std::string_view field);
  common::Result<Digest256> digest(std::string_view field);
  common::Result<Checksum128> checksum(std::string_view field);
  // A view into the payload; refused when longer than max_length or when it contains a NUL byte
  // (PROTOCOL.md §4: anything downstream that treats it as a C string would cut it short).
  common::Result<std::string_view> str16(std::string_view field, std::size_t max_length);
  common::Result<Bytes> blob32(std::string_view field);

  // The next n bytes as they are (a file's blob whose length was read apart, docs/bundle-format.md).
  common::Result<Bytes> bytes(std::size_t n, std::string_view field) { return take(n, field); }
  std::size_t remaining() const { return m_data.size() - m_offset; }
  // Fails with bad_request semantics when bytes are left over (PROTOCOL.md §4).
  common::Result<void> expect_end(std::string_view what) const;

 private:
  common::Result<Bytes> take(std::size_t n, std::string_view field);
  template <class T>
  common::Result<T> get_le(std::string_view field) {
    auto bytes = take(sizeof(T), field);
    JITCACHE_TRY(bytes);
    T v = 0;
    for (std::size_t i = 0; i < sizeof(T); ++i) v |= static_cast<T>(static_cast<T>((*bytes)[i]) << (8 * i));
    return v;
  }

  Bytes m_data;
  std::size_t m_offset = 0;
};

}  // namespace jitcache::proto
