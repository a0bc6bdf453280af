// A miss as the daemon's miss ring keeps it (daemon/stats/recent_misses.hpp): the op, how it
// ended, who asked and when, and the key fields it asked for. A LOOKUP by fast key knows no content
// digest, so its record has none (nor a key id) but the fast key's XXH3-128.
// Thread safety: free functions.
#pragma once

#include <cstdint>

#include <proto/explain_messages.hpp>
#include <proto/key.hpp>

#include <daemon/store/store.hpp>

namespace jitcache::daemon::ops {

proto::MissKind miss_kind(store::MissReason reason);
proto::MissRecord miss_of_key(proto::Op op, store::MissReason reason, std::uint32_t uid, const proto::KeyFields& key);
proto::MissRecord miss_of_fast_key(store::MissReason reason, std::uint32_t uid, const proto::FastKey& key);

}  // namespace jitcache::daemon::ops
