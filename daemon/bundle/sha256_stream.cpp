#include <daemon/bundle/sha256_stream.hpp>

#include <openssl/evp.h>

#include <cstdlib>

namespace jitcache::daemon::bundle {

struct Sha256Stream::Impl {
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  ~Impl() { EVP_MD_CTX_free(ctx); }
};

Sha256Stream::Sha256Stream() : m_impl(std::make_unique<Impl>()) {
  // Rationale: out of memory inside OpenSSL has no way out for a hash of a file we must sign.
  if (m_impl->ctx == nullptr || EVP_DigestInit_ex(m_impl->ctx, EVP_sha256(), nullptr) != 1) std::abort();
}
Sha256Stream::~Sha256Stream() = default;
Sha256Stream::Sha256Stream(Sha256Stream&&) noexcept = default;
Sha256Stream& Sha256Stream::operator=(Sha256Stream&&) noexcept = default;

void Sha256Stream::update(proto::Bytes bytes) {
  if (!bytes.empty()) EVP_DigestUpdate(m_impl->ctx, bytes.data(), bytes.size());
}

proto::Digest256 Sha256Stream::digest() const {
  EVP_MD_CTX* copy = EVP_MD_CTX_new();
  if (copy == nullptr || EVP_MD_CTX_copy_ex(copy, m_impl->ctx) != 1) std::abort();
  proto::Digest256 out;
  unsigned int length = 0;
  EVP_DigestFinal_ex(copy, out.bytes.data(), &length);
  EVP_MD_CTX_free(copy);
  return out;
}

}  // namespace jitcache::daemon::bundle
