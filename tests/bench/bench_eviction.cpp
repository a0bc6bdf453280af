// bench_eviction: what each eviction policy (config key eviction_policy) saves under a byte limit
// (docs/benchmarks.md "Eviction policy"). Replays request traces through the real SqliteStore on a
// temporary SQLite file, with max_size at a few fractions of the trace's working set, once per
// policy, and prints per trace, cap and policy: compile seconds saved (the hits' compile times),
// hit ratio, bytes served by hits and written after misses, and evictions.
//
// Traces (tests/bench/eviction_trace.hpp): (a) synthetic, log-normal sizes and size-correlated
// compile times; (b) the corpus in tests/data, each module as several entries (archs, options,
// drivers) of its cubin's stored size and compile time: measured here with nvJitLink when built
// with it and asked (--measure-corpus), else the figures docs/benchmarks.md records.
//
// A program that prints figures, not a timed test: its CTest smoke run (label bench) only proves
// that it runs end to end.
#include <unistd.h>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <spdlog/spdlog.h>
#include <CLI/CLI.hpp>

#include <daemon/store/eviction_order.hpp>
#include <daemon/store/image_codec.hpp>

#include <tests/bench/eviction_replay.hpp>
#include <tests/bench/eviction_trace.hpp>
#include <tests/bench/machine_info.hpp>

#ifdef JITCACHE_BENCH_NVJITLINK
#include <daemon/compile_worker/nvjitlink_compile.hpp>
#endif

namespace {

using namespace jitcache;
using daemon::store::EvictionOrder;

// sm_90 cubins stored at compression_level 3 (docs/benchmarks.md "Compression") and the cold JIT of
// each module on the GPU host (docs/benchmarks.md "Load through the cache vs the driver's own
// paths", column (c), commit 2d57381).
const std::vector<bench::CorpusModule> k_documented_corpus{
    {"small_kernel", 1'442, 18'600},
    {"mid_kernels", 37'392, 642'000},
    {"cub_kernels", 239'588, 3'856'000},
};

#ifdef JITCACHE_BENCH_NVJITLINK
// Compiles each module of the corpus for sm_90 as the compile worker does, timing it, and stores
// the cubin through the store's codec at level 3 for its stored size.
bool measure_corpus(const std::string& dir, std::vector<bench::CorpusModule>& modules) {
  for (auto& module : modules) {
    const std::filesystem::path path = std::filesystem::path(dir) / (module.name + ".ptx");
    std::ifstream in(path, std::ios::binary);
    daemon::compile::CompileJob job;
    job.arch = "sm_90";
    job.ptx.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    if (job.ptx.empty()) {
      std::fprintf(stderr, "bench_eviction: cannot read %s\n", path.c_str());
      return false;
    }
    const auto start = std::chrono::steady_clock::now();
    auto reply = daemon::compile_worker::compile_with_nvjitlink(job);
    const auto elapsed = std::chrono::steady_clock::now() - start;
    if (reply.status != daemon::compile::ReplyStatus::compiled) {
      std::fprintf(stderr, "bench_eviction: %s did not compile (nvJitLink result %u)\n", path.c_str(),
                   reply.nvjitlink_result);
      return false;
    }
    const auto encoded = daemon::store::encode_image(proto::Bytes(reply.payload.data(), reply.payload.size()), 3);
    module.stored_bytes = encoded.codec == daemon::store::Codec::raw ? reply.payload.size() : encoded.compressed.size();
    module.compile_us =
        static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(elapsed).count());
  }
  return true;
}
#endif

std::string megabytes(std::uint64_t bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f MB", static_cast<double>(bytes) / 1e6);
  return text;
}

// Compile seconds a store without limit would save: every request but the first of each entry.
double unlimited_seconds_saved(const bench::Trace& trace) {
  std::vector<bool> seen(trace.entries.size(), false);
  double seconds = 0;
  for (std::uint32_t index : trace.requests) {
    if (seen[index]) seconds += static_cast<double>(trace.entries[index].compile_us) / 1e6;
    seen[index] = true;
  }
  return seconds;
}

bool run_trace(const bench::Trace& trace, const std::vector<int>& caps, const std::vector<EvictionOrder>& orders,
               const std::filesystem::path& dir, std::uint64_t flush_every) {
  const std::uint64_t working_set = bench::working_set_bytes(trace);
  const double unlimited = unlimited_seconds_saved(trace);
  std::uint64_t asked = 0;
  {
    std::vector<bool> seen(trace.entries.size(), false);
    for (std::uint32_t index : trace.requests) asked += seen[index] ? 0 : 1, seen[index] = true;
  }
  std::printf("\ntrace %s: %zu requests over %llu entries, working set %s; without a limit %.1f compile s saved\n",
              trace.name.c_str(), trace.requests.size(), static_cast<unsigned long long>(asked),
              megabytes(working_set).c_str(), unlimited);
  std::printf("%5s %10s %6s %9s %15s %10s %12s %13s %9s %7s\n", "cap", "max_size", "policy", "hit ratio",
              "compile s saved", "of no-limit", "bytes hit", "bytes written", "evictions", "wall s");
  for (int cap : caps) {
    // Rationale: at least 1 MiB, the smallest max_size the daemon accepts.
    const std::uint64_t max_size =
        std::max<std::uint64_t>(working_set / 100 * static_cast<std::uint64_t>(cap), 1 << 20);
    for (EvictionOrder order : orders) {
      bench::ReplaySettings settings;
      settings.order = order;
      settings.max_size_bytes = max_size;
      settings.flush_every = flush_every;
      settings.directory = dir;
      auto figures = bench::replay(trace, settings);
      if (!figures) {
        std::fprintf(stderr, "bench_eviction: %s\n", figures.error().message.c_str());
        return false;
      }
      const auto& f = *figures;
      std::printf("%4d%% %10s %6s %8.1f%% %15.1f %9.1f%% %12s %13s %9llu %7.2f\n", cap, megabytes(max_size).c_str(),
                  std::string(daemon::store::eviction_order_name(order)).c_str(),
                  100.0 * static_cast<double>(f.hits) / static_cast<double>(std::max<std::uint64_t>(f.requests, 1)),
                  f.compile_seconds_saved, unlimited > 0 ? 100.0 * f.compile_seconds_saved / unlimited : 0.0,
                  megabytes(f.bytes_hit).c_str(), megabytes(f.bytes_written).c_str(),
                  static_cast<unsigned long long>(f.evictions), f.wall_seconds);
      std::fflush(stdout);
    }
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"compile seconds saved under a byte limit, per eviction policy (docs/benchmarks.md)"};
  std::vector<std::string> traces{"synthetic", "corpus"};
  std::vector<int> caps{10, 25, 50};
  std::vector<std::string> policies{"gdsf", "lru"};
  bench::PopularitySpec popularity;
  std::uint32_t ranks = 2000;
  std::uint32_t variants = 40;
  std::string corpus = JITCACHE_BENCH_CORPUS_DIR;
  bool measure = false;
  bool smoke = false;
  std::uint64_t flush_every = 100;
  std::string directory;
  app.add_option("--traces", traces, "synthetic, corpus")->delimiter(',')->capture_default_str();
  app.add_option("--caps", caps, "max_size as a percentage of each trace's working set")
      ->delimiter(',')
      ->capture_default_str();
  app.add_option("--policies", policies, "eviction_policy values to compare")->delimiter(',')->capture_default_str();
  app.add_option("--requests", popularity.requests, "Requests per trace")->capture_default_str();
  app.add_option("--ranks", ranks, "Synthetic: entries popular at a time")->capture_default_str();
  app.add_option("--variants", variants, "Corpus: entries per module at a time")->capture_default_str();
  app.add_option("--zipf", popularity.zipf_exponent, "Zipf exponent of popularity")->capture_default_str();
  app.add_option("--churn", popularity.churn, "Share of the ranks given a new entry at each phase")
      ->capture_default_str();
  app.add_option("--phases", popularity.phases, "Phases of a trace (churn happens between them)")
      ->capture_default_str();
  app.add_option("--seed", popularity.seed, "Seed of both traces")->capture_default_str();
  app.add_option("--flush-every", flush_every, "Requests between usage flushes")->capture_default_str();
  app.add_option("--corpus", corpus, "Directory of the corpus PTX files (--measure-corpus)")->capture_default_str();
  app.add_flag("--measure-corpus", measure, "Compile the corpus with nvJitLink for its sizes and compile times");
  app.add_option("--dir", directory, "Directory for the temporary database (default: the system's temp dir)");
  app.add_flag("--smoke", smoke, "A short run for CI: 1 500 requests, caps 25%, both traces and policies");
  CLI11_PARSE(app, argc, argv);
  // The store logs each eviction at info: thousands of lines between the figures.
  spdlog::set_level(spdlog::level::warn);
  if (smoke) {
    popularity.requests = 1500;
    ranks = 200;
    variants = 10;
    caps = {25};
  }

  std::vector<EvictionOrder> orders;
  for (const auto& name : policies) {
    auto order = daemon::store::eviction_order_named(name);
    if (!order) {
      std::fprintf(stderr, "bench_eviction: unknown policy \"%s\" (gdsf or lru)\n", name.c_str());
      return 2;
    }
    orders.push_back(*order);
  }
  std::vector<bench::CorpusModule> modules = k_documented_corpus;
  const char* corpus_source = "docs/benchmarks.md figures";
  if (measure) {
#ifdef JITCACHE_BENCH_NVJITLINK
    if (!measure_corpus(corpus, modules)) return 1;
    corpus_source = "measured here (nvJitLink, sm_90; stored at level 3)";
#else
    std::fprintf(stderr, "bench_eviction: built without nvJitLink, cannot --measure-corpus\n");
    return 1;
#endif
  }

  const std::filesystem::path dir =
      std::filesystem::path(directory.empty() ? std::filesystem::temp_directory_path().string() : directory) /
      ("bench_eviction." + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);

  const bench::MachineInfo machine = bench::read_machine_info();
  std::printf("machine: %s, %u CPUs usable, load %.2f\n", machine.cpu_model.c_str(), machine.usable_cpus,
              machine.load_average);
  std::printf("popularity: zipf %.2f, churn %.2f at each of %u phases, seed %llu; usage flushed every %llu requests\n",
              popularity.zipf_exponent, popularity.churn, popularity.phases,
              static_cast<unsigned long long>(popularity.seed), static_cast<unsigned long long>(flush_every));
  bool ok = true;
  for (const auto& name : traces) {
    if (name == "synthetic") {
      ok = ok && run_trace(bench::synthetic_trace(ranks, popularity), caps, orders, dir, flush_every);
    } else if (name == "corpus") {
      std::printf("\ncorpus modules (%s):", corpus_source);
      for (const auto& m : modules) {
        std::printf(" %s %llu B %.3f s;", m.name.c_str(), static_cast<unsigned long long>(m.stored_bytes),
                    static_cast<double>(m.compile_us) / 1e6);
      }
      std::printf("\n");
      ok = ok && run_trace(bench::corpus_trace(modules, variants, popularity), caps, orders, dir, flush_every);
    } else {
      std::fprintf(stderr, "bench_eviction: unknown trace \"%s\" (synthetic or corpus)\n", name.c_str());
      ok = false;
    }
  }
  std::filesystem::remove_all(dir);
  return ok ? 0 : 1;
}
