// bench_compression: what zstd does to the images jitcached stores, to choose the default of the
// config key compression_level (docs/benchmarks.md "Compression"). Compiles the corpus PTX to
// cubins with nvJitLink (as the daemon's compile worker does), or reads cubin files given on the
// command line, then for each image and level prints the stored size, the ratio, and compress
// and decompress speed through the store's own codec (daemon/store/image_codec.hpp).
//
// A program that prints figures, not a timed test: its CTest smoke run (label bench) only proves
// that it runs.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include <daemon/store/image_codec.hpp>

#include <tests/bench/machine_info.hpp>

#ifdef JITCACHE_BENCH_NVJITLINK
#include <daemon/compile_worker/nvjitlink_compile.hpp>
#endif

namespace {

using namespace jitcache;
using Clock = std::chrono::steady_clock;

struct Image {
  std::string name;
  std::vector<std::uint8_t> bytes;
};

std::vector<std::uint8_t> read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<std::uint8_t>(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

#ifdef JITCACHE_BENCH_NVJITLINK
bool compile_corpus(const std::string& dir, const std::string& arch, std::vector<Image>& out) {
  std::vector<std::filesystem::path> ptx_files;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() == ".ptx") ptx_files.push_back(entry.path());
  }
  std::sort(ptx_files.begin(), ptx_files.end());
  for (const auto& path : ptx_files) {
    daemon::compile::CompileJob job;
    job.arch = arch;
    job.ptx = read_file(path);
    auto reply = daemon::compile_worker::compile_with_nvjitlink(job);
    if (reply.status != daemon::compile::ReplyStatus::compiled) {
      std::fprintf(stderr, "bench_compression: %s did not compile for %s (nvJitLink result %u)\n", path.c_str(),
                   arch.c_str(), reply.nvjitlink_result);
      return false;
    }
    out.push_back(Image{path.stem().string() + " (" + arch + ")", std::move(reply.payload)});
  }
  return true;
}
#endif

// The median of `runs` timings of fn, in seconds.
template <class F>
double median_seconds(int runs, F&& fn) {
  std::vector<double> times;
  for (int i = 0; i < runs; ++i) {
    const auto start = Clock::now();
    fn();
    times.push_back(std::chrono::duration<double>(Clock::now() - start).count());
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"zstd ratio and speed per level on compiled images (docs/benchmarks.md)"};
  std::string corpus;
  if (const char* dir = std::getenv("JITCACHE_CORPUS_DIR")) corpus = dir;
  std::string arch = "sm_90";
  std::vector<int> levels{1, 3, 6, 9, 19};
  std::vector<std::string> cubins;
  int runs = 5;
  app.add_option("--corpus", corpus, "Directory of PTX files to compile ($JITCACHE_CORPUS_DIR)");
  app.add_option("--arch", arch, "Target of the compile")->capture_default_str();
  app.add_option("--levels", levels, "zstd levels to measure")->delimiter(',')->capture_default_str();
  app.add_option("--cubin", cubins, "Cubin files to measure instead of compiling the corpus");
  app.add_option("--runs", runs, "Timed runs per figure (the median is printed)")->capture_default_str();
  CLI11_PARSE(app, argc, argv);

  std::vector<Image> images;
  for (const auto& path : cubins)
    images.push_back(Image{std::filesystem::path(path).filename().string(), read_file(path)});
  if (images.empty()) {
#ifdef JITCACHE_BENCH_NVJITLINK
    if (corpus.empty() || !compile_corpus(corpus, arch, images)) return 1;
#else
    std::fprintf(stderr, "bench_compression: built without nvJitLink; pass --cubin files\n");
    return 1;
#endif
  }

  const bench::MachineInfo machine = bench::read_machine_info();
  std::printf("machine: %s, %u CPUs usable, load %.2f\n", machine.cpu_model.c_str(), machine.usable_cpus,
              machine.load_average);
  std::printf("%-28s %5s %10s %10s %7s %12s %12s\n", "image", "level", "raw", "stored", "ratio", "compress",
              "decompress");
  for (const auto& image : images) {
    const proto::Bytes raw(image.bytes.data(), image.bytes.size());
    for (int level : levels) {
      daemon::store::EncodedImage encoded;
      const double compress_s = median_seconds(runs, [&] { encoded = daemon::store::encode_image(raw, level); });
      const bool raw_kept = encoded.codec == daemon::store::Codec::raw;
      const std::size_t stored = raw_kept ? raw.size() : encoded.compressed.size();
      double decompress_s = 0;
      if (!raw_kept) {
        decompress_s = median_seconds(runs, [&] {
          auto decoded = daemon::store::decode_image(static_cast<std::uint8_t>(daemon::store::Codec::zstd),
                                                     encoded.compressed, raw.size());
          if (!std::holds_alternative<daemon::store::ImageBuffer>(decoded)) std::abort();
        });
      }
      const double mb = static_cast<double>(raw.size()) / 1e6;
      std::printf("%-28s %5d %10zu %10zu %6.2fx %8.0f MB/s %8.0f MB/s\n", image.name.c_str(), level, raw.size(), stored,
                  static_cast<double>(raw.size()) / static_cast<double>(stored), mb / compress_s,
                  raw_kept ? 0.0 : mb / decompress_s);
    }
  }
  return 0;
}
