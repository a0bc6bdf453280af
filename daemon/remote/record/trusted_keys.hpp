// TrustedKeys: the ed25519 public keys whose signatures a daemon accepts on remote index records
// (config remote_trusted_keys: several files, for rotation; docs/operations.md "A fleet").
// Thread safety: immutable once loaded.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <common/result.hpp>
#include <proto/signing.hpp>

namespace jitcache::daemon::remote {

class TrustedKeys {
 public:
  TrustedKeys() = default;
  // Every file must hold one public key (PEM, as `jitcache keygen` and `openssl pkey -pubout`
  // write them); a file that does not is an error naming it.
  static common::Result<TrustedKeys> load(const std::vector<std::string>& paths);
  explicit TrustedKeys(std::vector<proto::PublicKey> keys);

  const proto::PublicKey* find(const proto::SignerId& id) const;
  const std::vector<proto::PublicKey>& keys() const { return m_keys; }
  bool empty() const { return m_keys.empty(); }

 private:
  std::vector<proto::PublicKey> m_keys;
  std::vector<proto::SignerId> m_ids;  // m_keys[i].id(), computed once: find runs on every remote hit
};

}  // namespace jitcache::daemon::remote
