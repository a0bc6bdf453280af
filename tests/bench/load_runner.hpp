// Drives one benchmark cell: one thread per client, each repeating its request on its own
// connection, first for a warm-up whose requests are not counted, then for a fixed measurement
// window in which every request's latency is recorded.
// Thread safety: run_load() is called from one thread; it owns the client threads it starts, and
// each LoadClient is used by exactly one of them.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <tests/bench/latency_recorder.hpp>

namespace jitcache::bench {

// One client of a cell: a connection and the request it repeats.
class LoadClient {
 public:
  virtual ~LoadClient() = default;
  // One request and its reply, checked; false with `failure` set when it failed.
  virtual bool request(std::string& failure) = 0;
};

struct LoadSettings {
  std::chrono::duration<double> warm_up{0.5};
  std::chrono::duration<double> measure{3.0};
  // Called on the driving thread when the window opens and after the last request of the window
  // has finished, e.g. to read the servers' CPU time.
  std::function<void()> at_window_start;
  std::function<void()> at_window_end;
};

struct LoadResult {
  std::uint64_t requests = 0;  // begun inside the window and completed without failure
  std::uint64_t failures = 0;  // a failing client stops, so this counts clients that failed
  std::string first_failure;
  double seconds = 0;  // from the window's start to the end of its last request
  LatencySummary latency;

  double requests_per_second() const { return seconds > 0 ? static_cast<double>(requests) / seconds : 0; }
};

LoadResult run_load(const LoadSettings& settings, std::vector<std::unique_ptr<LoadClient>> clients);

}  // namespace jitcache::bench
