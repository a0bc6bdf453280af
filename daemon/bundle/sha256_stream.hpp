// SHA-256 of bytes that arrive in pieces (a bundle as it is written or read), through OpenSSL.
// Thread safety: one object per stream.
#pragma once

#include <memory>

#include <proto/digest.hpp>

namespace jitcache::daemon::bundle {

class Sha256Stream {
 public:
  Sha256Stream();
  ~Sha256Stream();
  Sha256Stream(Sha256Stream&&) noexcept;
  Sha256Stream& operator=(Sha256Stream&&) noexcept;

  void update(proto::Bytes bytes);
  // The digest of everything so far; the stream goes on from there.
  proto::Digest256 digest() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> m_impl;
};

}  // namespace jitcache::daemon::bundle
