#include <daemon/remote/record/trusted_keys.hpp>

#include <algorithm>
#include <utility>

namespace jitcache::daemon::remote {

common::Result<TrustedKeys> TrustedKeys::load(const std::vector<std::string>& paths) {
  std::vector<proto::PublicKey> keys;
  for (const auto& path : paths) {
    JITCACHE_TRY_ASSIGN(const proto::PublicKey key, proto::load_public_key(path));
    const auto same_id =
        std::find_if(keys.begin(), keys.end(), [&](const proto::PublicKey& other) { return other.id() == key.id(); });
    if (same_id == keys.end()) {
      keys.push_back(key);
    } else if (same_id->raw != key.raw) {
      // Rationale: a record names its signer by id alone, so two keys under one id would make the
      // id ambiguous; 64 bits make this a deliberate collision, and refusing it costs nothing.
      return common::make_error(common::ErrorCode::invalid_argument, "the public key " + path + " has the signer id " +
                                                                         proto::signer_hex(key.id()) +
                                                                         " of another key in remote_trusted_keys");
    }
    // The same key named twice (a file and a copy of it) is trusted once.
  }
  return TrustedKeys(std::move(keys));
}

TrustedKeys::TrustedKeys(std::vector<proto::PublicKey> keys) : m_keys(std::move(keys)) {
  m_ids.reserve(m_keys.size());
  for (const auto& key : m_keys) m_ids.push_back(key.id());
}

const proto::PublicKey* TrustedKeys::find(const proto::SignerId& id) const {
  const auto found = std::find(m_ids.begin(), m_ids.end(), id);
  return found == m_ids.end() ? nullptr : &m_keys[static_cast<std::size_t>(found - m_ids.begin())];
}

}  // namespace jitcache::daemon::remote
