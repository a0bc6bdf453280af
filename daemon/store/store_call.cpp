#include <daemon/store/store_call.hpp>

#include <array>

namespace jitcache::daemon::store {

namespace {

// In the enum's order; the static_assert below keeps the two the same length.
constexpr std::array<std::string_view, k_store_call_count> k_names{
    "lookup",
    "put",
    "remove",
    "list",
    "totals",
    "flush_usage",
    "collect_garbage",
    "integrity_check",
    "verify_entries",
    "namespace_totals",
    "report_failure",
    "publishable_entry",
    "note_published_hit",
    "near_entries",
    "hot_set",
    "kept_source",
    "has_shared_entry",
    "known_drivers",
    "has_entries_of",
    "export_entries",
    "presence",
    "import_entries",
};
static_assert(k_names.back() == "import_entries", "a StoreCall without its name");

}  // namespace

std::string_view store_call_name(StoreCall call) { return k_names[static_cast<std::size_t>(call)]; }

}  // namespace jitcache::daemon::store
