// The child side of bench_client_load: one timed load in a process of its own, so that every
// sample pays what a program pays on its first load (no warm connection, no loaded driver state
// beyond its context). The parent spawns `bench_client_load --child MODE ...` once per sample.
//
// The child reads the image into memory and creates its context first (not timed), then times the
// one load call, then proves the module usable by fetching its first kernel (not timed), and
// prints one line:
//
//   RESULT ns=<load call> outcome=<jitcache outcome> hit_path=<published|socket|-> published_rejects=<n>
//          lookups=<n> key=<key id> ns_key=.. ns_lookup=.. ns_load=.. ns_compile=.. ns_total=..
//          (the fields after ns only in the jitcache mode; hit_path says whether a hit came from the
//          daemon's published copy or over the socket, from jitcache_counters.published_hits;
//          lookups is jitcache_counters.lookups, the LOOKUP requests the load sent)
//
// or "SKIPPED: <reason>" with exit status 77 where there is no GPU, or "ERROR <what>" with 1.
// Thread safety: runs on the child's main thread.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace jitcache::bench {

enum class ChildMode {
  probe,     // open the GPU and print "GPU: <description>"; nothing timed
  jitcache,  // jitcache_module_load_data(PTX): a hit, a miss or the fallback, as the daemon decides
  driver,    // cuModuleLoadData(PTX): the driver's JIT, with its compute cache as the env sets it
  cubin,     // cuModuleLoadData(cubin already in memory)
};

std::optional<ChildMode> parse_child_mode(std::string_view name);
const char* child_mode_name(ChildMode mode);

struct ChildRequest {
  ChildMode mode = ChildMode::probe;
  std::string module_path;  // the PTX (also names the kernel fetched in every mode)
  std::string cubin_path;   // the cubin mode's image
  // A start line for many children at once (bench_cold_start): when set, the child creates
  // `ready_file` once its context exists, waits until `start_file` exists, then times its load, and
  // adds start_ns= and end_ns= (steady clock, comparable across processes of one host) to RESULT.
  std::string ready_file;
  std::string start_file;
};

inline constexpr int k_skip_status = 77;

// Returns the child's exit status.
int run_client_load_child(const ChildRequest& request);

}  // namespace jitcache::bench
