// The NVRTC share of the daemon's figures (Counters' nvrtc_* fields, docs/operations.md "Metrics"):
// a LOOKUP, HIT_NOTE or PUT of a key whose options are "compiler=nvrtc" (proto/jit_options.hpp) is
// counted here as well as in the figures of every load, with the same vocabulary (hits, misses by
// reason, puts, compile time saved); the compiles clients could not cache arrive as NVRTC_NOTE
// (proto/nvrtc_note_messages.hpp), one counter per reason.
// Thread safety: atomic additions; call from any thread.
#pragma once

#include <cstdint>
#include <string_view>

#include <daemon/stats/counters.hpp>
#include <daemon/store/store.hpp>
#include <proto/nvrtc_note_messages.hpp>

namespace jitcache::daemon::stats {

// `options`: the options field of the key or fast key asked for. Keys of other compiles count nothing.
void count_nvrtc_hit(Counters& counters, std::string_view options, std::uint64_t compile_time_us);
void count_nvrtc_miss(Counters& counters, std::string_view options, store::MissReason reason);
void count_nvrtc_put(Counters& counters, std::string_view options);

// The counter of one reason.
Counters::Counter& nvrtc_uncached_counter(Counters& counters, proto::NvrtcUncachedReason reason);

}  // namespace jitcache::daemon::stats
