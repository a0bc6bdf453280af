// SqliteStore's LIST pages (Store::list): a range of entries_by_key (or entries_by_namespace) from
// the position a cursor names, within what the caller sees, filtered by its fields.
#include <daemon/store/sqlite_store.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include <common/result.hpp>
#include <daemon/store/entry_row.hpp>
#include <daemon/store/key_id_range.hpp>
#include <daemon/store/list_cursor.hpp>

namespace jitcache::daemon::store {

using common::ErrorCode;
using common::make_error;

namespace {

// LIST. The position (?1, ?2) is the last row already returned (or just below the prefix range);
// ?3 is the range's upper end; ?4..?6 the field filters ('' / 0 = any); ?7 trusted, ?8 the
// caller's namespace; ?9 the row limit. Without a namespace filter the row-value comparison walks
// entries_by_key in (key_id, namespace) order; with one (?10), entries_by_namespace serves a plain
// key_id range, whose lower end the caller has already moved past the position.
const std::string k_list_filters =
    " AND (?4 = '' OR arch = ?4) AND (?5 = 0 OR driver_api = ?5) AND (?6 = '' OR driver_build = ?6)"
    " AND (?7 = 1 OR namespace IN (0, ?8)) AND (?11 = 0 OR " +
    std::string(k_stale_condition_sql) + ")";
const std::string k_list_sql = std::string("SELECT ") + k_entry_columns +
                               " FROM entries WHERE (key_id, namespace) > (?1, ?2) AND key_id < ?3" + k_list_filters +
                               " ORDER BY key_id, namespace LIMIT ?9";
const std::string k_list_namespace_sql = std::string("SELECT ") + k_entry_columns +
                                         " FROM entries WHERE namespace = ?10 AND key_id >= ?1 AND key_id < ?3" +
                                         k_list_filters + " ORDER BY key_id LIMIT ?9";

// SQLite's BLOB order: memcmp, then the shorter first.
bool blob_less(const std::vector<std::uint8_t>& a, const std::vector<std::uint8_t>& b) {
  return std::lexicographical_compare(a.begin(), a.end(), b.begin(), b.end());
}

struct Position {
  std::vector<std::uint8_t> key_id;
  std::int64_t namespace_id = -1;  // below every namespace
};

bool position_less(const Position& a, const Position& b) {
  if (blob_less(a.key_id, b.key_id)) return true;
  if (blob_less(b.key_id, a.key_id)) return false;
  return a.namespace_id < b.namespace_id;
}

}  // namespace

Result<ListPage> SqliteStore::list(const ListQuery& query, const Visibility& who) {
  JITCACHE_TRY(m_handle.begin_call(StoreCall::list));
  if (query.limit < 1 || query.limit > proto::k_max_list_limit) {
    return make_error(ErrorCode::invalid_argument, "LIST limit " + std::to_string(query.limit) + " is not within 1.." +
                                                       std::to_string(proto::k_max_list_limit));
  }
  auto range = key_id_range(query.key_id_prefix, 0);
  JITCACHE_TRY(range);

  Position start{range->lo, -1};
  if (!query.cursor.empty()) {
    auto cursor = decode_list_cursor(query.cursor);
    JITCACHE_TRY(cursor);
    Position after{std::vector<std::uint8_t>(cursor->key_id.bytes.begin(), cursor->key_id.bytes.end()),
                   cursor->namespace_id};
    if (position_less(start, after)) start = std::move(after);
  }

  // With stale_driver_after 0 no driver is ever stale.
  if (query.stale_only && m_policy.stale_driver_after_ms <= 0) return ListPage{};
  // Asks kept in memory are written first, so that a driver asked for since the last flush is not
  // shown as stale.
  if (query.stale_only) {
    JITCACHE_TRY(flush_usage());
  }
  return m_handle.run([&](StoreDatabase& db) -> Result<ListPage> {
    auto reader = db.readers.acquire();
    auto stmt =
        reader->statement(query.namespace_id ? std::string_view(k_list_namespace_sql) : std::string_view(k_list_sql));
    JITCACHE_TRY(stmt);
    Statement& s = **stmt;
    // With a fixed namespace N, "(key_id, N) after start" is "key_id >= start.key_id" when N is above
    // start's namespace, else "key_id > start.key_id", which in BLOB order is
    // "key_id >= start.key_id || x'00'".
    if (query.namespace_id && *query.namespace_id <= start.namespace_id) start.key_id.push_back(0);
    s.bind_blob(1, start.key_id);
    s.bind(2, start.namespace_id);
    s.bind_blob(3, range->hi);
    s.bind_text(4, query.arch);
    s.bind(5, query.driver_api);
    s.bind_text(6, query.driver_build);
    s.bind(7, who.trusted ? 1 : 0);
    s.bind(8, who.own_namespace);
    s.bind(9, std::int64_t{query.limit} + 1);  // one more than asked: is there a next page?
    if (query.namespace_id) s.bind(10, *query.namespace_id);
    s.bind(11, query.stale_only ? 1 : 0);
    s.bind(12, m_clock() - m_policy.stale_driver_after_ms);

    ListPage page;
    for (;;) {
      auto has_row = s.step("listing entries");
      JITCACHE_TRY(has_row);
      if (!*has_row) break;
      if (page.entries.size() == query.limit) {
        const proto::EntryInfo& last = page.entries.back();
        page.next_cursor = encode_list_cursor(ListPosition{last.key_id, last.namespace_id});
        break;
      }
      auto row = read_entry_row(s);
      if (!row)
        return make_error(ErrorCode::corrupt,
                          "listing entries: a row has a key id, digest or checksum of the wrong size");
      page.entries.push_back(std::move(row->info));
    }
    return page;
  });
}

}  // namespace jitcache::daemon::store
