#include <tests/bench/load_runner.hpp>

#include <algorithm>
#include <latch>
#include <thread>

namespace jitcache::bench {

namespace {

using Clock = std::chrono::steady_clock;

struct ClientTally {
  LatencyRecorder latencies;
  std::uint64_t failures = 0;
  std::string first_failure;
  Clock::time_point last_finish{};
};

}  // namespace

LoadResult run_load(const LoadSettings& settings, std::vector<std::unique_ptr<LoadClient>> clients) {
  const auto count = clients.size();
  std::vector<ClientTally> tallies(count);
  // Written by this thread before `go` opens and only read by the clients after it: the latch
  // orders them.
  Clock::time_point window_start;
  Clock::time_point window_end;
  std::latch ready(static_cast<std::ptrdiff_t>(count));
  std::latch go(1);

  std::vector<std::jthread> threads;
  threads.reserve(count);
  for (std::size_t i = 0; i < count; ++i) {
    threads.emplace_back([&, i] {
      ClientTally& tally = tallies[i];
      LoadClient& client = *clients[i];
      ready.count_down();
      go.wait();
      std::string failure;
      for (;;) {
        const auto begin = Clock::now();
        if (begin >= window_end) break;
        const bool ok = client.request(failure);
        const auto finish = Clock::now();
        if (!ok) {
          ++tally.failures;
          tally.first_failure = failure;
          break;
        }
        if (begin >= window_start) {
          tally.latencies.record(finish - begin);
          tally.last_finish = finish;
        }
      }
    });
  }

  ready.wait();
  // Rationale: every client thread exists and waits before the clock starts, so thread start-up
  // (slow with 64 threads on a small machine) falls before the warm-up, not into it.
  window_start = Clock::now() + std::chrono::duration_cast<Clock::duration>(settings.warm_up);
  window_end = window_start + std::chrono::duration_cast<Clock::duration>(settings.measure);
  go.count_down();
  std::this_thread::sleep_until(window_start);
  if (settings.at_window_start) settings.at_window_start();
  threads.clear();  // joins; no request begins after window_end
  if (settings.at_window_end) settings.at_window_end();

  LoadResult result;
  LatencyRecorder all(0);
  Clock::time_point last_finish = window_start;
  for (const auto& tally : tallies) {
    all.merge(tally.latencies);
    result.failures += tally.failures;
    if (result.first_failure.empty()) result.first_failure = tally.first_failure;
    last_finish = std::max(last_finish, tally.last_finish);
  }
  result.requests = all.count();
  result.seconds = std::chrono::duration<double>(last_finish - window_start).count();
  result.latency = all.summarize();
  return result;
}

}  // namespace jitcache::bench
