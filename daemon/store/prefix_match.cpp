#include <daemon/store/prefix_match.hpp>

#include <algorithm>
#include <common/result.hpp>

namespace jitcache::daemon::store {

namespace {

// Distinct key ids under a prefix range within what a caller sees; LIMIT 2 is enough to tell
// "one" from "ambiguous".
constexpr char k_visible_key_ids_sql[] =
    "SELECT DISTINCT key_id FROM entries WHERE key_id >= ?1 AND key_id < ?2 AND namespace IN (0, ?3)"
    " ORDER BY key_id LIMIT 2";

// The same for what a caller may remove: ?3 trusted (everything), else only ?4, never the shared
// namespace.
constexpr char k_removable_key_ids_sql[] =
    "SELECT DISTINCT key_id FROM entries WHERE key_id >= ?1 AND key_id < ?2"
    " AND (?3 = 1 OR (namespace = ?4 AND ?4 <> 0)) ORDER BY key_id LIMIT 2";

}  // namespace

Result<PrefixMatch> match_prefix(SqliteDb& db, PrefixScope scope, const KeyIdRange& range, const Visibility& who,
                                 std::string_view what) {
  auto stmt = db.statement(scope == PrefixScope::visible ? k_visible_key_ids_sql : k_removable_key_ids_sql);
  JITCACHE_TRY(stmt);
  (*stmt)->bind_blob(1, range.lo);
  (*stmt)->bind_blob(2, range.hi);
  if (scope == PrefixScope::visible) {
    (*stmt)->bind(3, who.own_namespace);
  } else {
    (*stmt)->bind(3, who.trusted ? 1 : 0);
    (*stmt)->bind(4, who.own_namespace);
  }
  PrefixMatch match;
  for (;;) {
    auto row = (*stmt)->step(what);
    JITCACHE_TRY(row);
    if (!*row) break;
    proto::Bytes key_id = (*stmt)->column_blob(0);
    if (match.count == 0 && key_id.size() == match.key_id.bytes.size()) {
      std::copy(key_id.begin(), key_id.end(), match.key_id.bytes.begin());
    }
    ++match.count;
  }
  return match;
}

common::Error ambiguous_prefix(const std::string& prefix) {
  return common::make_error(common::ErrorCode::invalid_argument,
                            "key id prefix " + prefix +
                                " is ambiguous: it matches more than one key id; give more digits");
}

}  // namespace jitcache::daemon::store
