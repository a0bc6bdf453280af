// Store: the serving core of the daemon's cache, a map from (key id, namespace) to a compiled image
// and its metadata. It is what a request is served from: one lookup call (by key id, by fast key
// id, or by key-id prefix) that returns a hit or a miss with its reason, put, remove, list and
// totals. What only some callers need lives in interfaces of their own, so that each consumer
// names what it uses and another kind of store (a remote tier, a tiered store over a local and a
// remote one: docs/architecture.md "The store") implements only what it can:
//   maintenance.hpp     eviction and GC, VERIFY, usage flushes (SqliteStore)
//   tenancy.hpp         bytes by namespace, failure reports and quarantine (SqliteStore)
//   publish_source.hpp  what the published images are made from (SqliteStore)
//   diagnosis.hpp       EXPLAIN's and MISSES' questions (SqliteDiagnosis)
//   sources.hpp         the PTX kept for the re-JIT (SqliteSources)
//   entry_transfer.hpp  bundles' exports and imports (SqliteEntryTransfer)
// The last three are classes of their own beside SqliteStore over its database handle
// (sqlite_store.hpp, store_handle.hpp).
//
// Thread safety: every method may be called from any thread at any time, and may block on I/O (the
// SQLite store serialises writes on one writer and serves reads from a pool, so reads never wait
// for each other); the server keeps all store calls off its accept loop (daemon/server/). A miss is
// not an error: lookup returns "hit / miss (and why) / failed".
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include <common/result.hpp>
#include <proto/digest.hpp>
#include <proto/key.hpp>
#include <proto/messages.hpp>

#include <daemon/store/image_buffer.hpp>
#include <daemon/store/image_codec.hpp>
#include <daemon/store/selector.hpp>
#include <daemon/store/totals.hpp>

namespace jitcache::daemon::store {

using common::Result;

inline constexpr std::uint32_t k_shared_namespace = 0;

// Which namespaces a caller can see and touch (docs/security.md "What is enforced"). Lookups see
// the shared namespace and the caller's own, shared first, except shared entries the caller has
// reported failing (Tenancy::report_failure). A trusted caller lists and removes in every namespace.
struct Visibility {
  std::uint32_t own_namespace = k_shared_namespace;
  bool trusted = false;
};

// An image whose checksum was verified against the stored XXH3-128 after it was read (or when it
// entered the store's hot image cache). The buffer may be shared with that cache: never modify it.
struct Hit {
  proto::EntryInfo info;
  std::shared_ptr<const ImageBuffer> image;  // raw bytes, info.raw_size long
  std::int64_t row_id = 0;                   // the row it was read from (publish_source.hpp RowDropped)
  // The entry's fast-key content, so that a hit can be stored again elsewhere as it was (a tiered
  // store copying a remote hit into the local store: docs/architecture.md "The store").
  proto::Checksum128 content_fast;
};

// Why a lookup found nothing to serve. Each is the end of the search: a client that asked by fast
// key does not ask again by key (PROTOCOL.md §5 LOOKUP), so the daemon counts one miss per LOOKUP.
enum class MissReason {
  not_found,    // no entry of the key in a namespace the caller sees
  quarantined,  // only quarantined ones, or a shared one the caller reported (Tenancy::report_failure)
  corrupt,      // the entry's image failed its checksum: it was deleted (Totals::corrupt_entries)
};

struct Miss {
  MissReason reason = MissReason::not_found;
};

using LookupOutcome = std::variant<Hit, Miss>;

inline bool is_hit(const LookupOutcome& outcome) { return std::holds_alternative<Hit>(outcome); }

struct PutInput {
  proto::KeyFields key;  // already validated by the caller (proto::validate_key)
  std::uint32_t namespace_id = k_shared_namespace;
  std::string producer;
  std::uint64_t compile_time_us = 0;
  proto::Bytes image;  // raw image bytes; must stay valid for the duration of put()
                       // (the store compresses them itself: image_codec.hpp)
  // The writer's XXH3-128 of the source (PUT's content_fast): indexes the entry for lookups by fast
  // key. Every entry has one (schema 7, docs/entry-format.md), so a fast-key miss is final.
  proto::Checksum128 content_fast;
  // The source the image was compiled from (the daemon's own compiles), or empty: a tier that
  // shares entries keeps it beside them so another host can compile the entry again and compare
  // (daemon/remote/tiered_store.hpp). The local store keeps the PTX of a shared entry within its
  // source_budget (sources.hpp), so the daemon can compile the entry again without a client.
  proto::Bytes source = {};
  // With `source`: the nvJitLink options (besides -arch) it was compiled with, one per line.
  std::string worker_options = {};
};

struct PutOutcome {
  proto::Digest256 key_id;
  bool replaced = false;
  std::int64_t row_id = 0;  // the row now holding the entry (publish_source.hpp RowDropped)
};

struct ListQuery {
  std::string arch;                           // empty: any
  std::uint32_t driver_api = 0;               // 0: any
  std::string driver_build;                   // empty: any
  std::optional<std::uint32_t> namespace_id;  // only this namespace (still within visibility)
  std::string key_id_prefix;                  // empty or hex
  std::uint32_t limit = 100;                  // 1..proto::k_max_list_limit
  std::string cursor;                         // "" or a next_cursor from a previous page
  // Only entries of a driver no client has asked for within stale_driver_after: the ones eviction
  // takes first (LIST's trailing stale_only, `jitcache ls --stale`).
  bool stale_only = false;
};

struct ListPage {
  std::vector<proto::EntryInfo> entries;
  std::string next_cursor;  // empty: no more
};

class Store {
 public:
  virtual ~Store() = default;

  // The live entry the selector names that `who` sees, shared namespace first; never a quarantined
  // one, nor a shared one `who` reported failing. A hit counts as a use of the entry (its hits and
  // last use, kept in memory: maintenance.hpp flush_usage). A key-id prefix matching more than one
  // visible key id is an ErrorCode::invalid_argument error whose message says "ambiguous".
  virtual Result<LookupOutcome> lookup(const Selector& selector, const Visibility& who) = 0;
  // Inserts or replaces the entry (key id, namespace); a replaced entry is live again, whatever its
  // quarantine. Errors: no_space when the disk is full, too_large for an image over a limit.
  virtual Result<PutOutcome> put(const PutInput& input) = 0;
  // Removes what `who` owns (trusted: any namespace) under the prefix; returns how many entries.
  // A prefix matching more than one key id is an "ambiguous" invalid_argument error.
  virtual Result<std::uint32_t> remove(const std::string& prefix, const Visibility& who) = 0;
  // Quarantined entries included (EntryInfo::quarantined_at_ms is set).
  virtual Result<ListPage> list(const ListQuery& query, const Visibility& who) = 0;
  virtual Result<Totals> totals() = 0;
};

}  // namespace jitcache::daemon::store
