// The JSON document of the process report (docs/process-report.md): what process_report.cpp writes
// at exit, rendered from a snapshot so that it can be tested without exiting.
// Thread safety: pure functions over the snapshot.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include <jitcache/jitcache.h>

namespace jitcache::client::loader {

// The format's version ("version" in the document): raised when a field changes meaning or goes
// away; new fields may appear without it.
inline constexpr int k_report_format_version = 1;

// One load as the report keeps it: the function the program called and the load's record.
struct ReportedLoad {
  char entry_point[64] = {};  // "jitcache_module_load_data_ex", "cuLibraryLoadData", ...
  jitcache_load_info info{};
};

struct ReportSnapshot {
  std::string program;  // argv[0]
  std::string comm;     // /proc/self/comm
  std::string exe;      // /proc/self/exe
  pid_t pid = 0;
  std::optional<pid_t> forked_from;  // set in a child whose report started at fork()
  jitcache_counters counters{};
  std::uint64_t outcomes[JITCACHE_OUTCOME_UNCACHED_FALLBACK + 1] = {};  // every noted load, by outcome
  std::span<const ReportedLoad* const> loads;                           // the loads kept, in order
  std::uint64_t dropped = 0;  // noted loads past the limit (or still being noted at exit)
  std::uint64_t limit = 0;    // how many loads a report keeps
};

std::string render_report(const ReportSnapshot& snapshot);

// Every field of jitcache_counters by name, as the report writes them.
struct CounterField {
  const char* name;
  std::uint64_t jitcache_counters::*field;
};
std::span<const CounterField> counter_fields();

}  // namespace jitcache::client::loader
