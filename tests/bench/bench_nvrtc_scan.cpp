// bench_nvrtc_scan: what the include scan of an NVRTC compile costs (client/src/nvrtc/include_scan.hpp,
// docs/benchmarks.md "NVRTC compiles"), on a source that includes the CUDA C++ standard library
// (libcu++) as CuPy's kernels do, with -I to the toolkit's CCCL and include directories.
//
// One process: the first scan ("cold": nothing remembered in the process, the memo across
// processes off, the OS page cache as it is) and then --repeat scans of the same input ("warm":
// what each later compile of a program pays). Prints the outcome (a record, or the reason the
// compile would be NVRTC's own), how many files were read and paths probed, and the times. Then a
// new process's first scan, with the scan memo across processes (client/src/nvrtc/scan_memo.hpp)
// off and on: what this process remembered is forgotten, the memo (in --memo-dir, else a fresh
// directory) filled by one scan, forgotten, and the first scan timed with it; --repeat of each,
// the median printed. The OS page cache is as the first scans left it (warm), so "memo off" is a
// lower bound of a new process's cost. Figures are printed, never asserted.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <stdlib.h>

#include <client/src/nvrtc/include_scan.hpp>
#include <client/src/nvrtc/scan_memo.hpp>
#include <tests/bench/machine_info.hpp>

namespace {

using Clock = std::chrono::steady_clock;

// What CuPy's elementwise and reduction kernels reach through cupy/complex.cuh and friends: the
// type traits, fixed-width integers, complex numbers and the half type of the toolkit.
constexpr const char* k_source =
    "#include <cuda/std/type_traits>\n"
    "#include <cuda/std/cstdint>\n"
    "#include <cuda/std/complex>\n"
    "#include <cuda/std/limits>\n"
    "#include <cuda_fp16.h>\n"
    "extern \"C\" __global__ void k(float* x) { x[threadIdx.x] *= 2; }\n";

double elapsed_ms(Clock::time_point since) {
  return std::chrono::duration<double, std::milli>(Clock::now() - since).count();
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

// The median of `repeat` first scans of a new process (nothing remembered in the process).
double new_process_ms(const jitcache::client::nvrtc::IncludeScanInput& input, int repeat) {
  std::vector<double> times;
  for (int i = 0; i < repeat; ++i) {
    jitcache::client::nvrtc::forget_scanned_files();
    const auto started = Clock::now();
    static_cast<void>(jitcache::client::nvrtc::scan_includes(input));
    times.push_back(elapsed_ms(started));
  }
  return median(times);
}

}  // namespace

int main(int argc, char** argv) {
  std::string cuda_include = "/usr/local/cuda/include";
  std::string source_file;
  std::vector<std::string> include_paths;
  int repeat = 20;
  CLI::App app{"bench_nvrtc_scan: the include scan of a libcu++-heavy NVRTC compile, cold and warm"};
  app.add_option("--cuda-include", cuda_include, "the toolkit's include directory (its cccl/ is searched first)");
  app.add_option("--repeat", repeat, "warm scans after the first")->check(CLI::PositiveNumber);
  app.add_option("--source", source_file, "scan this file instead of the built-in libcu++ source")
      ->check(CLI::ExistingFile);
  app.add_option("-I", include_paths, "more include paths, searched before the toolkit's");
  bool warm_only = false;
  app.add_flag("--warm-only", warm_only, "stop after the warm scans (to profile them alone)");
  std::string memo_dir;
  app.add_option("--memo-dir", memo_dir, "the scan memo's directory for the new-process figures (default: a new one)");
  CLI11_PARSE(app, argc, argv);
  std::string source = k_source;
  if (!source_file.empty()) {
    std::ifstream in(source_file, std::ios::binary);
    source.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  include_paths.push_back(cuda_include + "/cccl");
  include_paths.push_back(cuda_include);

  const jitcache::bench::MachineInfo machine = jitcache::bench::read_machine_info();
  std::printf("machine: %s, %u of %u CPUs usable, load %.2f\n", machine.cpu_model.c_str(), machine.usable_cpus,
              machine.online_cpus, machine.load_average);

  const jitcache::client::nvrtc::IncludeScanInput input{"kernel.cu", source, {}, include_paths, {}};
  // The in-process figures without the memo across processes, whatever this uid's memo holds.
  ::setenv("JITCACHE_NVRTC_SCAN_MEMO", "0", 1);
  auto started = Clock::now();
  const auto cold = jitcache::client::nvrtc::scan_includes(input);
  const double cold_ms = elapsed_ms(started);
  if (cold) {
    std::printf("outcome: a record of %zu files read, %zu paths probed\n", cold->files, cold->probes);
  } else {
    std::printf("outcome: NVRTC's own: %s\n", cold.error().message.c_str());
  }
  std::vector<double> warm;
  for (int i = 0; i < repeat; ++i) {
    started = Clock::now();
    const auto again = jitcache::client::nvrtc::scan_includes(input);
    warm.push_back(elapsed_ms(started));
    if (static_cast<bool>(again) != static_cast<bool>(cold) || (again && again->text != cold->text)) {
      std::printf("error: scan %d gave another answer than the first\n", i + 2);
      return 1;
    }
  }
  std::sort(warm.begin(), warm.end());
  std::printf("%-34s %10s\n", "scan", "ms");
  std::printf("%-34s %10.2f\n", "cold (first in the process)", cold_ms);
  std::printf("%-34s %10.2f\n", "warm, median", warm[warm.size() / 2]);
  std::printf("%-34s %10.2f\n", "warm, fastest", warm.front());
  std::printf("%-34s %10.2f\n", "warm, slowest", warm.back());
  if (warm_only) return 0;

  const double without_memo = new_process_ms(input, repeat);
  ::unsetenv("JITCACHE_NVRTC_SCAN_MEMO");
  const bool made_memo_dir = memo_dir.empty();
  if (made_memo_dir) {
    char made[] = "/tmp/bench-nvrtc-scan-memo-XXXXXX";
    if (::mkdtemp(made) == nullptr) return 1;
    memo_dir = made;
  }
  ::setenv("JITCACHE_NVRTC_SCAN_MEMO_DIR", memo_dir.c_str(), 1);
  jitcache::client::nvrtc::forget_scanned_files();
  static_cast<void>(jitcache::client::nvrtc::scan_includes(input));  // fills the memo
  const std::string unavailable = jitcache::client::nvrtc::scan_memo_unavailable();
  const double with_memo = new_process_ms(input, repeat);
  std::printf("%-34s %10.2f\n", "new process, memo off, median", without_memo);
  std::printf("%-34s %10.2f%s\n", "new process, memo on, median", with_memo,
              unavailable.empty() ? "" : ("  (" + unavailable + ")").c_str());
  if (made_memo_dir) std::filesystem::remove_all(memo_dir);
  return 0;
}
