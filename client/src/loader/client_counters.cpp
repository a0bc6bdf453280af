#include <client/src/loader/client_counters.hpp>

namespace jitcache::client::loader {

void ClientCounters::count_outcome(jitcache_load_outcome outcome) {
  ++loads;
  switch (outcome) {
    case JITCACHE_OUTCOME_PASS_THROUGH: ++pass_through; break;
    case JITCACHE_OUTCOME_HIT: ++hits; break;
    case JITCACHE_OUTCOME_COMPILED_BY_DAEMON: ++compiled_by_daemon; break;
    case JITCACHE_OUTCOME_COMPILED_LOCALLY: ++compiled_locally; break;
    case JITCACHE_OUTCOME_REBUILT_AFTER_FAILED_LOAD: ++rebuilt_after_failed_load; break;
    case JITCACHE_OUTCOME_UNCACHED_FALLBACK: ++uncached_fallbacks; break;
    case JITCACHE_OUTCOME_NONE: break;
  }
}

jitcache_counters ClientCounters::snapshot() const {
  jitcache_counters out{};
  out.struct_size = sizeof(out);
  out.loads = loads;
  out.pass_through = pass_through;
  out.hits = hits;
  out.compiled_by_daemon = compiled_by_daemon;
  out.compiled_locally = compiled_locally;
  out.rebuilt_after_failed_load = rebuilt_after_failed_load;
  out.uncached_fallbacks = uncached_fallbacks;
  out.daemon_unavailable = daemon_unavailable;
  out.failure_reports = failure_reports;
  out.puts = puts;
  out.put_failures = put_failures;
  out.corrupt_replies = corrupt_replies;
  out.fast_key_mismatches = fast_key_mismatches;
  out.published_hits = published_hits;
  out.published_rejects = published_rejects;
  out.lookups = lookups;
  return out;
}

void ClientCounters::reset() {
  for (auto* counter :
       {&loads, &pass_through, &hits, &compiled_by_daemon, &compiled_locally, &rebuilt_after_failed_load,
        &uncached_fallbacks, &daemon_unavailable, &failure_reports, &puts, &put_failures, &corrupt_replies,
        &fast_key_mismatches, &published_hits, &published_rejects, &lookups}) {
    counter->store(0);
  }
}

}  // namespace jitcache::client::loader
