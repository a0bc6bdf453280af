#include <proto/digest.hpp>

// Rationale: the one-shot and EVP interfaces of OpenSSL 3 initialise the library (providers, the
// config file) on first use, ~2 ms that every short-lived client process would pay on its first
// load; SHA256_Init/Update/Final run the same SHA-extension code with no such start-up. They are
// deprecated, not removed, in OpenSSL 3.
#define OPENSSL_SUPPRESS_DEPRECATED
#include <openssl/sha.h>
#include <xxhash.h>

#include <stdexcept>

namespace jitcache::proto {

Digest256 sha256(Bytes data) {
  Digest256 out;
  SHA256_CTX context;
  // Failure here means libcrypto is broken, which no caller could recover from.
  if (SHA256_Init(&context) != 1 || SHA256_Update(&context, data.data(), data.size()) != 1 ||
      SHA256_Final(out.bytes.data(), &context) != 1) {
    throw std::runtime_error("OpenSSL SHA-256 failed");
  }
  return out;
}

Checksum128 xxh3_128(Bytes data) {
  XXH128_canonical_t canonical;
  XXH128_canonicalFromHash(&canonical, XXH3_128bits(data.data(), data.size()));
  Checksum128 out;
  static_assert(sizeof(canonical.digest) == sizeof(out.bytes));
  for (std::size_t i = 0; i < out.bytes.size(); ++i) out.bytes[i] = canonical.digest[i];
  return out;
}

std::string to_hex(Bytes data) {
  static constexpr char k_digits[] = "0123456789abcdef";
  std::string out;
  out.reserve(data.size() * 2);
  for (std::uint8_t b : data) {
    out.push_back(k_digits[b >> 4]);
    out.push_back(k_digits[b & 0xF]);
  }
  return out;
}

namespace {
int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}
}  // namespace

std::optional<Digest256> digest_from_hex(std::string_view hex) {
  Digest256 out;
  if (hex.size() != out.bytes.size() * 2) return std::nullopt;
  for (std::size_t i = 0; i < out.bytes.size(); ++i) {
    int hi = hex_value(hex[2 * i]);
    int lo = hex_value(hex[2 * i + 1]);
    if (hi < 0 || lo < 0) return std::nullopt;
    out.bytes[i] = static_cast<std::uint8_t>(hi << 4 | lo);
  }
  return out;
}

}  // namespace jitcache::proto
