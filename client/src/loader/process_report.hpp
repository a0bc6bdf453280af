// JITCACHE_REPORT=path: when the process exits, a JSON summary of its loads is written to `path`
// (docs/process-report.md): the program, its pid, the counters, the loads by outcome and one record
// per load (the first k_max_loads; the rest are counted). "%p" in the path becomes the pid. It is
// what a program that never linked libjitcache can show: libjitcache-preload.so notes every call it
// caches, and libjitcache notes its own loads (api/c_api.cpp).
//
// The variable is read at the first load; then the report registers its exit handler (atexit, so a
// report is written by exit() and a return from main, not by _exit(), abort() or a fatal signal)
// and a fork handler: a child made by fork() starts an empty report of its own. A process that
// loads nothing writes no report. The file is written to a temporary name beside it and renamed,
// so a reader sees a whole report or none; a failure to write it is one warning on stderr
// (JITCACHE_QUIET=1, or a load's quiet setting, silences it), never stdout, never a failed exit.
//
// Thread safety: note() may be called from any number of threads at once, and during fork() and
// exit(): it takes no lock (a load claims a slot with one atomic increment, then marks it
// written), so nothing is held across fork and nothing can deadlock the exit handler. A load still
// being noted when the report is written is counted as dropped.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <string>
#include <string_view>

#include <jitcache/jitcache.h>

namespace jitcache::client::loader {

class ProcessReport {
 public:
  // Rationale: 4096 loads are more than `import torch` and a first kernel make (445 calls under
  // EAGER loading, docs/driver-facts.md §6) several times over, and about 5 MiB of records; a
  // program that loads more is summarised by the counts, which cover every load.
  static constexpr std::size_t k_max_loads = 4096;

  // Records one finished load: `info` as jitcache_last_load_info() returns it after the call;
  // `entry_point` the function the program called ("jitcache_module_load_data_ex",
  // "cuLibraryLoadData"; cut to 63 bytes); `quiet` whether the load's settings silence warnings.
  // Costs one atomic load when JITCACHE_REPORT is unset.
  static void note(const jitcache_load_info& info, std::string_view entry_point, bool quiet);
};

// The report's path for a process: each "%p" of `pattern` replaced by `pid`, "%%" by "%".
std::string expand_report_path(std::string_view pattern, pid_t pid);

}  // namespace jitcache::client::loader
