#include <tests/bench/cold_start_wave.hpp>

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <sstream>
#include <stdexcept>
#include <thread>

#include <tests/support/temp_dir.hpp>

namespace jitcache::bench {

namespace {

using Clock = std::chrono::steady_clock;

// Rationale: 32 contexts on one GPU are created one after another by the driver (~0.2 s each) and a
// cold JIT of cub_kernels.ptx takes 4-7 s; a child past this is stuck.
constexpr auto k_child_timeout = std::chrono::seconds(600);
constexpr auto k_ready_timeout = std::chrono::seconds(300);

std::map<std::string, std::string> result_fields(const std::string& output) {
  std::map<std::string, std::string> fields;
  const auto at = output.find("RESULT ");
  if (at == std::string::npos) return fields;
  std::istringstream line(output.substr(at + 7, output.find('\n', at) - at - 7));
  std::string pair;
  while (line >> pair) {
    const auto eq = pair.find('=');
    if (eq != std::string::npos) fields[pair.substr(0, eq)] = pair.substr(eq + 1);
  }
  return fields;
}

}  // namespace

WaveResult run_wave(ChildMode mode, const std::string& module_path, const std::vector<testing::EnvChange>& env,
                    unsigned processes) {
  testing::TempDir line("jitcache-bench-cold-start");
  const std::string start_file = line.file("start");
  std::vector<testing::ChildResult> results(processes);
  std::vector<std::thread> threads;
  std::atomic<unsigned> finished{0};  // children that exited, ready or not
  for (unsigned i = 0; i < processes; ++i) {
    std::vector<std::string> argv{testing::self_executable(),
                                  "--child",
                                  child_mode_name(mode),
                                  "--module",
                                  module_path,
                                  "--ready-file",
                                  line.file("ready." + std::to_string(i)),
                                  "--start-file",
                                  start_file};
    threads.emplace_back([&results, &finished, i, argv, &env] {
      results[i] = testing::run_child(argv, env, k_child_timeout);
      ++finished;
    });
  }

  // The start line: every child has its context, or has died trying (a child waiting at the line
  // never exits, so ready + finished counts each child at most once until the line opens).
  const auto deadline = Clock::now() + k_ready_timeout;
  for (;;) {
    unsigned ready = 0;
    for (const auto& entry : std::filesystem::directory_iterator(line.path())) {
      ready += entry.path().filename().string().starts_with("ready.") ? 1 : 0;
    }
    if (ready + finished >= processes || Clock::now() > deadline) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  const auto released = Clock::now();
  testing::write_file(start_file, "go");
  for (auto& thread : threads) thread.join();

  WaveResult wave;
  wave.processes = processes;
  std::int64_t last_end = 0;
  for (unsigned i = 0; i < processes; ++i) {
    auto fields = result_fields(results[i].output);
    if (results[i].status != 0 || !fields.contains("end_ns")) {
      wave.failures.push_back("child " + std::to_string(i) + " exited with " + std::to_string(results[i].status) +
                              ": " + results[i].output.substr(0, 300));
      continue;
    }
    last_end = std::max<std::int64_t>(last_end, std::stoll(fields["end_ns"]));
    wave.load_seconds.push_back(std::stod(fields["ns"]) / 1e9);
    if (fields.contains("outcome")) ++wave.outcomes[fields["outcome"]];
  }
  const std::int64_t start_ns = std::chrono::nanoseconds(released.time_since_epoch()).count();
  wave.wall_seconds = last_end > start_ns ? static_cast<double>(last_end - start_ns) / 1e9 : 0;
  return wave;
}

}  // namespace jitcache::bench
