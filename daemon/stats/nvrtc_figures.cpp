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

}  // namespace jitcache::daemon::stats
