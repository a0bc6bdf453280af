#include <daemon/store/selector.hpp>

namespace jitcache::daemon::store {

Selector Selector::key(const proto::KeyFields& key) {
  return Selector(Kind::key_id, proto::key_id(key), {}, AskedDriver{key.driver_api, key.driver_build});
}

Selector Selector::fast_key(const proto::FastKey& key) {
  return Selector(Kind::fast_key_id, proto::fast_key_id(key), {}, AskedDriver{key.driver_api, key.driver_build});
}

Selector Selector::key_id(const proto::Digest256& key_id) { return Selector(Kind::key_id, key_id, {}, std::nullopt); }

Selector Selector::fast_key_id(const proto::Digest256& fast_key_id) {
  return Selector(Kind::fast_key_id, fast_key_id, {}, std::nullopt);
}

Selector Selector::key_id_prefix(std::string prefix) {
  return Selector(Kind::key_id_prefix, proto::Digest256{}, std::move(prefix), std::nullopt);
}

}  // namespace jitcache::daemon::store
