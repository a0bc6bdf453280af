// Which key ids a hex prefix names within what a caller sees (a lookup by prefix) or may delete (a
// REMOVE): 0, 1, or "more than one", which both answer with the same "ambiguous" error.
// Thread safety: free functions over a connection the caller holds exclusively.
#pragma once

#include <string>
#include <string_view>

#include <common/result.hpp>
#include <proto/digest.hpp>

#include <daemon/store/key_id_range.hpp>
#include <daemon/store/sqlite_db.hpp>
#include <daemon/store/store.hpp>

namespace jitcache::daemon::store {

enum class PrefixScope {
  visible,    // what a lookup sees: the shared namespace and the caller's own
  removable,  // what a REMOVE may delete: the caller's own namespace, or everything when trusted
};

// How many distinct key ids match (0, 1, or 2 meaning "more than one"), and the first of them.
struct PrefixMatch {
  int count = 0;
  proto::Digest256 key_id;
};

Result<PrefixMatch> match_prefix(SqliteDb& db, PrefixScope scope, const KeyIdRange& range, const Visibility& who,
                                 std::string_view what);

// The invalid_argument error of a prefix that matches more than one key id.
common::Error ambiguous_prefix(const std::string& prefix);

}  // namespace jitcache::daemon::store
