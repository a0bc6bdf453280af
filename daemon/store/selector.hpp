// Selector: what a lookup asks for (store.hpp Store::lookup) — an entry by key id, by fast key id
// or by key-id prefix, and the driver the client's key names, which the store notes as in use.
// Thread safety: a value type.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include <proto/digest.hpp>
#include <proto/key.hpp>

namespace jitcache::daemon::store {

// The driver a lookup's key names (API version and build): the store notes it as in use, found or
// not, so that its entries are not stale (eviction.hpp). Kept in memory and written with the usage
// flush, and only for a driver that has entries: a lookup never writes.
struct AskedDriver {
  std::uint32_t api = 0;
  std::string build;
};

// What a lookup asks for. Build one with the functions below; the store reads kind() and id() or
// prefix().
class Selector {
 public:
  enum class Kind : std::uint8_t {
    key_id,         // proto::key_id of the whole key (LOOKUP selector 0, COMPILE)
    fast_key_id,    // proto::fast_key_id (LOOKUP selector 2): the caller checks the entry's content digest
    key_id_prefix,  // 8..64 hex digits of a key id (LOOKUP selector 1, `jitcache get`)
  };

  // By the whole key: its key id, and its driver noted as asked for.
  static Selector key(const proto::KeyFields& key);
  // By fast key: its fast key id, and its driver noted as asked for.
  static Selector fast_key(const proto::FastKey& key);
  // By an id alone, no driver noted (a caller that has no key at hand).
  static Selector key_id(const proto::Digest256& key_id);
  static Selector fast_key_id(const proto::Digest256& fast_key_id);
  static Selector key_id_prefix(std::string prefix);

  Kind kind() const { return m_kind; }
  const proto::Digest256& id() const { return m_id; }     // kind key_id or fast_key_id
  const std::string& prefix() const { return m_prefix; }  // kind key_id_prefix
  const std::optional<AskedDriver>& driver() const { return m_driver; }

 private:
  Selector(Kind kind, proto::Digest256 id, std::string prefix, std::optional<AskedDriver> driver)
      : m_kind(kind), m_id(id), m_prefix(std::move(prefix)), m_driver(std::move(driver)) {}

  Kind m_kind;
  proto::Digest256 m_id;
  std::string m_prefix;
  std::optional<AskedDriver> m_driver;
};

}  // namespace jitcache::daemon::store
