// ed25519 keys and signatures for the fleet tier's signed index (docs/remote-layout.md "Signing"),
// through OpenSSL's libcrypto. Key files are PEM: a PKCS#8 private key ("PRIVATE KEY") and a
// SubjectPublicKeyInfo public key ("PUBLIC KEY"), as `jitcache keygen` writes them and as
// `openssl genpkey -algorithm ed25519` / `openssl pkey -pubout` do.
// Thread safety: a SigningKey may sign from several threads at once; values otherwise.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include <common/result.hpp>

namespace jitcache::proto {

// A signer's id: the first 8 bytes of the SHA-256 of its raw 32-byte public key (shown as 16 hex
// digits in logs, records and `jitcache keygen`'s output).
using SignerId = std::array<std::uint8_t, 8>;
using Signature = std::array<std::uint8_t, 64>;

std::string signer_hex(const SignerId& id);

struct PublicKey {
  std::array<std::uint8_t, 32> raw{};
  SignerId id() const;
  // Whether `signature` is this key's signature of `message`.
  bool verifies(std::string_view message, const Signature& signature) const;
};

// A public key from a PEM file; an error names the file and what is wrong with it.
common::Result<PublicKey> load_public_key(const std::string& path);

class SigningKey {
 public:
  // A private key from a PEM file that only its owner can read or write: a file with any group or
  // other permission bits, or owned by another uid than the caller's effective uid, is refused
  // (ErrorCode::forbidden) with a message saying how to fix it (chmod 600).
  static common::Result<SigningKey> load(const std::string& path);
  static SigningKey generate();

  Signature sign(std::string_view message) const;
  const PublicKey& public_key() const { return m_public; }

  // Writes PREFIX.key (the private key, mode 0600, refused if it exists) and PREFIX.pub.
  common::Result<void> write_pair(const std::string& prefix) const;

  SigningKey(SigningKey&&) noexcept;
  SigningKey& operator=(SigningKey&&) noexcept;
  ~SigningKey();

 private:
  struct Impl;
  explicit SigningKey(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> m_impl;
  PublicKey m_public;
};

}  // namespace jitcache::proto
