#include <daemon/stats/compile_stats.hpp>

namespace jitcache::daemon::stats {

void append_compile_stats(std::vector<std::pair<std::string, std::uint64_t>>& out, const Counters& counters,
                          const compile::CompileCounters* engine) {
  auto value = [](const std::atomic<std::uint64_t>& c) { return c.load(std::memory_order_relaxed); };
  auto from_engine = [&](const std::atomic<std::uint64_t> compile::CompileCounters::*member) -> std::uint64_t {
    return engine != nullptr ? value(engine->*member) : 0;
  };
  using C = compile::CompileCounters;
  const std::uint64_t compile_us = from_engine(&C::compile_microseconds);
  const std::uint64_t saved_us = value(counters.compile_microseconds_saved);
  out.insert(out.end(), {
                            {"compile_requests", value(counters.compile_requests)},
                            {"compile_store_hits", value(counters.compile_store_hits)},
                            {"compiles", from_engine(&C::compiles)},
                            {"compile_failures", from_engine(&C::compile_failures)},
                            {"compile_seconds", compile_us / 1'000'000},
                            {"compile_microseconds", compile_us},
                            {"single_flight_joins", from_engine(&C::single_flight_joins)},
                            {"compile_refused", from_engine(&C::refused)},
                            {"compile_busy", from_engine(&C::busy_rejections)},
                            {"compile_busy_per_uid", from_engine(&C::busy_per_tenant)},
                            {"compile_negative_hits", from_engine(&C::negative_hits)},
                            {"compile_queue_length", from_engine(&C::queue_length)},
                            {"compile_running", from_engine(&C::running)},
                            {"compile_stored", value(counters.compile_stored)},
                            {"compile_seconds_saved", saved_us / 1'000'000},
                            {"compile_microseconds_saved", saved_us},
                        });
}

}  // namespace jitcache::daemon::stats
