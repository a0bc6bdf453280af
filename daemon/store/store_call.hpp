// StoreCall: every call of the SQLite store's interfaces that can fail, one name each, so that a
// fault can be aimed at one of them (store_faults.hpp) whichever class serves it: SqliteStore (the
// entries: store.hpp, maintenance.hpp, tenancy.hpp, publish_source.hpp), SqliteSources
// (sources.hpp), SqliteEntryTransfer (entry_transfer.hpp) and SqliteDiagnosis (diagnosis.hpp).
// Thread safety: values only.
#pragma once

#include <cstddef>
#include <string_view>

namespace jitcache::daemon::store {

enum class StoreCall : std::size_t {
  // Store
  lookup,
  put,
  remove,
  list,
  totals,
  // Maintenance
  flush_usage,
  collect_garbage,
  integrity_check,
  verify_entries,
  // Tenancy
  namespace_totals,
  report_failure,
  // PublishSource
  publishable_entry,
  note_published_hit,
  // Diagnosis
  near_entries,
  // Sources
  hot_set,
  kept_source,
  has_shared_entry,
  known_drivers,
  has_entries_of,
  // EntryTransfer
  export_entries,
  presence,
  import_entries,
};
inline constexpr std::size_t k_store_call_count = static_cast<std::size_t>(StoreCall::import_entries) + 1;

// The method's name, for messages: "lookup", "export_entries", ...
std::string_view store_call_name(StoreCall call);

}  // namespace jitcache::daemon::store
