// The names of the load vocabularies (jitcache_load_outcome, jitcache_load_stage) in one table each:
// jitcache_outcome_name() and jitcache_stage_name() return them, and the process report
// (process_report.hpp) writes them, so a name in a report is the name a program prints.
// Thread safety: pure functions returning static strings.
#pragma once

#include <string_view>

#include <jitcache/jitcache.h>

namespace jitcache::client::loader {

// "pass_through", "hit", "compiled_by_daemon", ...; "unknown" for a value outside the enum.
std::string_view outcome_name(jitcache_load_outcome outcome);

// Every outcome a load can have, in enum order (JITCACHE_OUTCOME_NONE excluded).
inline constexpr jitcache_load_outcome k_load_outcomes[] = {JITCACHE_OUTCOME_PASS_THROUGH,
                                                            JITCACHE_OUTCOME_HIT,
                                                            JITCACHE_OUTCOME_COMPILED_BY_DAEMON,
                                                            JITCACHE_OUTCOME_COMPILED_LOCALLY,
                                                            JITCACHE_OUTCOME_REBUILT_AFTER_FAILED_LOAD,
                                                            JITCACHE_OUTCOME_UNCACHED_FALLBACK};

// In words, for messages: "no image for this device", "PTX version", "JIT", ... (jitcache_stage_name).
std::string_view stage_words(jitcache_load_stage stage);

// As an identifier, for machine-readable output: "none", "image", "ptx_version", "jit", "load", "cache"
// (the enum's names, JITCACHE_STAGE_*, in lower case).
std::string_view stage_key(jitcache_load_stage stage);

}  // namespace jitcache::client::loader
