#include <daemon/stats/nvrtc_figures.hpp>

#include <proto/jit_options.hpp>

namespace jitcache::daemon::stats {

void count_nvrtc_hit(Counters& counters, std::string_view options, std::uint64_t compile_time_us) {
  if (!proto::is_nvrtc_option_text(options)) return;
  Counters::add(counters.nvrtc_hits);
  Counters::add(counters.nvrtc_compile_microseconds_saved, compile_time_us);
}

void count_nvrtc_miss(Counters& counters, std::string_view options, store::MissReason reason) {
  if (!proto::is_nvrtc_option_text(options)) return;
  Counters::add(counters.nvrtc_misses);
  if (reason == store::MissReason::quarantined) Counters::add(counters.nvrtc_misses_quarantined);
  if (reason == store::MissReason::corrupt) Counters::add(counters.nvrtc_misses_corrupt);
}

void count_nvrtc_put(Counters& counters, std::string_view options) {
  if (proto::is_nvrtc_option_text(options)) Counters::add(counters.nvrtc_puts);
}

Counters::Counter& nvrtc_uncached_counter(Counters& counters, proto::NvrtcUncachedReason reason) {
  using enum proto::NvrtcUncachedReason;
  switch (reason) {
    case side_effect_option: return counters.nvrtc_uncached_side_effect_option;
    case unknown_option: return counters.nvrtc_uncached_unknown_option;
    case unnamed_include: return counters.nvrtc_uncached_unnamed_include;
    case unreadable_library: return counters.nvrtc_uncached_unreadable_library;
    case compiled_before: return counters.nvrtc_uncached_compiled_before;
    case not_stored: return counters.nvrtc_uncached_not_stored;
    case internal_error: return counters.nvrtc_uncached_internal_error;
  }
  return counters.nvrtc_uncached_internal_error;
}

}  // namespace jitcache::daemon::stats
