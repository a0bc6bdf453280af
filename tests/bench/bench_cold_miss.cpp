// bench_cold_miss: what a miss that the daemon compiles costs beyond the compile itself
// (docs/benchmarks.md "A cold miss"), with the real jitcached and its real compile worker (no GPU).
//
// Each sample is a PTX module the store has never seen (the corpus module with a comment line of
// its own appended, so its content digest is new), asked for as libjitcache asks for a miss: a
// LOOKUP that misses, then COMPILE. The overhead is the client's wall time for both minus the
// compile time the worker measured around nvJitLink alone (the entry's compile_time_us): process
// start, the job's and the image's way through pipes and the socket, storing the entry.
// Samples are spaced apart so a spare worker (compile_spare_workers) is ready again, as it is for
// misses that do not come in a burst. Every configuration in --spare-workers runs against a daemon
// of its own. Figures are printed, never asserted; `--smoke` runs it small (CI's bench label).
#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <proto/compile_messages.hpp>
#include <proto/content_digest.hpp>
#include <proto/jit_options.hpp>
#include <tests/bench/machine_info.hpp>
#include <tests/support/daemon_process.hpp>
#include <tests/support/fleet_hosts.hpp>
#include <tests/support/sample_entries.hpp>
#include <tests/support/temp_dir.hpp>

namespace jitcache::bench {
namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

// The target: a cold miss costs no more than its compile plus this.
constexpr double k_target_overhead_ms = 1.0;

struct Options {
  std::vector<std::string> ptx;
  std::vector<unsigned> spare_workers{0, 1};
  unsigned repeat = 15;
  std::chrono::milliseconds gap{200};
};

double ms(Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<std::size_t>(p * static_cast<double>(v.size() - 1) + 0.5))];
}

struct Sample {
  double wall_ms = 0;     // LOOKUP miss + COMPILE, as the client sees it
  double compile_ms = 0;  // nvJitLink alone, as the worker measured it
};

std::string file_name(const std::string& path) { return path.substr(path.find_last_of('/') + 1); }

std::vector<Sample> measure(const std::string& ptx_path, unsigned spare_workers, const Options& o) {
  const std::string ptx = testing::read_file(ptx_path);
  testing::TempDir state("jitcache-bench-cold-miss");
  testing::DaemonOptions options;
  options.extra_args = {"--compile-spare-workers", std::to_string(spare_workers)};
  testing::DaemonProcess daemon(state, options);
  daemon.start();
  auto client = daemon.client();
  std::vector<Sample> samples;
  // One uncounted compile first: the daemon's own first use of its pools and the page cache.
  for (unsigned i = 0; i <= o.repeat; ++i) {
    std::this_thread::sleep_for(o.gap);
    const std::string variant = ptx + "\n// bench_cold_miss sample " + std::to_string(i) + " " +
                                std::to_string(Clock::now().time_since_epoch().count()) + "\n";
    const auto request = testing::fleet_compile_request(variant);
    const proto::KeyFields key = proto::key_of(request, proto::content_digest(request.ptx));
    const auto start = Clock::now();
    auto looked = client.lookup(key);
    if (!looked || looked->has_value()) throw std::runtime_error("the first LOOKUP of a new module did not miss");
    auto answer = client.compile(request, 600s);
    const auto wall = Clock::now() - start;
    if (!answer || answer->kind != client::transport::CompileAnswer::Kind::compiled || !answer->image) {
      throw std::runtime_error("COMPILE of " + ptx_path +
                               " failed: " + (answer ? answer->message : answer.error().message));
    }
    if (i == 0) continue;
    samples.push_back(Sample{ms(wall), static_cast<double>(answer->image->info.compile_time_us) / 1000.0});
  }
  return samples;
}

void report(const std::string& ptx_path, unsigned spare_workers, const std::vector<Sample>& samples) {
  std::vector<double> wall;
  std::vector<double> compile;
  std::vector<double> overhead;
  for (const auto& s : samples) {
    wall.push_back(s.wall_ms);
    compile.push_back(s.compile_ms);
    overhead.push_back(s.wall_ms - s.compile_ms);
  }
  const double median_overhead = percentile(overhead, 0.5);
  std::printf(
      "%-18s spare %u | wall %8.2f ms | compile %8.2f ms | overhead median %6.2f p90 %6.2f min %6.2f ms | "
      "target <= %.1f ms: %s\n",
      file_name(ptx_path).c_str(), spare_workers, percentile(wall, 0.5), percentile(compile, 0.5), median_overhead,
      percentile(overhead, 0.9), percentile(overhead, 0.0), k_target_overhead_ms,
      median_overhead <= k_target_overhead_ms ? "PASS" : "MISS");
}

}  // namespace
}  // namespace jitcache::bench

int main(int argc, char** argv) {
  using namespace jitcache::bench;
  Options o;
  const std::string data = JITCACHE_TEST_DATA_DIR;
  o.ptx = {data + "/small_kernel.ptx", data + "/mid_kernels.ptx"};
  bool smoke = false;
  unsigned gap_ms = 200;
  CLI::App app{"bench_cold_miss: a daemon-compiled miss against its compile time"};
  app.add_option("--ptx", o.ptx, "PTX modules (each sample appends a comment of its own)");
  app.add_option("--spare-workers", o.spare_workers, "compile_spare_workers of each daemon measured");
  app.add_option("--repeat", o.repeat, "samples per module and configuration");
  app.add_option("--gap-ms", gap_ms, "pause before each sample, for the spare worker to be started again");
  app.add_flag("--smoke", smoke, "small: small_kernel.ptx, 3 samples");
  CLI11_PARSE(app, argc, argv);
  o.gap = std::chrono::milliseconds(gap_ms);
  if (smoke) {
    o.ptx = {data + "/small_kernel.ptx"};
    o.repeat = 3;
  }
  try {
    const MachineInfo machine = read_machine_info();
    std::printf("machine: %s, %u CPUs, %llu MiB, load %.2f\n", machine.cpu_model.c_str(), machine.usable_cpus,
                static_cast<unsigned long long>(machine.memory_mib), machine.load_average);
    std::printf("a cold miss: LOOKUP (miss) + COMPILE wall time, against the worker's nvJitLink time; %u samples\n",
                o.repeat);
    for (const auto& ptx : o.ptx) {
      for (const unsigned spare : o.spare_workers) report(ptx, spare, measure(ptx, spare, o));
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_cold_miss: %s\n", e.what());
    return 1;
  }
  return 0;
}
