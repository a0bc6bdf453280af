// bench_bundle_bomb: another tenant's PUT and EXPORT latency while an attacker imports a bundle of
// zstd bombs (docs/benchmarks.md "Bundle bombs"; docs/security.md "Bundles"). The attacker (uid B
// where system users can be made, else root) imports, into its own namespace, a small unsigned
// bundle whose every entry is a frame of a few KB that decodes to a large cubin: all entries
// distinct, or one entry repeated. The victim (root) PUTs in a loop and exports once meanwhile.
// Printed: the import's time and outcome, and the victim's PUT latencies before and during it.
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include <common/unique_fd.hpp>
#include <daemon/bundle/bundle_writer.hpp>
#include <daemon/bundle/zstd_frame.hpp>
#include <proto/bundle_messages.hpp>
#include <tests/bench/latency_recorder.hpp>
#include <tests/bench/machine_info.hpp>
#include <tests/support/daemon_process.hpp>
#include <tests/support/sample_cubin.hpp>
#include <tests/support/sample_entries.hpp>
#include <tests/support/system_users.hpp>
#include <tests/support/temp_dir.hpp>

using namespace jitcache;
using Clock = std::chrono::steady_clock;

namespace {

struct Options {
  unsigned entries = 400;
  unsigned raw_mib = 60;
  double baseline_s = 2;
  bool smoke = false;
};

void write_bomb(const std::string& path, const Options& options, bool repeated) {
  std::vector<std::uint8_t> code((std::size_t{options.raw_mib} << 20) - testing::min_cubin_size(testing::CubinSpec{}),
                                 0);
  code[0] = 0x42;
  const auto raw = testing::make_cubin(testing::CubinSpec{}, code);
  const auto frame = daemon::bundle::encode_zstd_frame(proto::Bytes(raw), 1);
  common::UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
  daemon::bundle::BundleHeader header;
  header.host = "attacker";
  header.entry_count = options.entries;
  header.producer = "bench";
  auto writer = daemon::bundle::BundleWriter::start(daemon::bundle::fd_sink(fd.get()), header, nullptr);
  for (unsigned i = 0; i < options.entries; ++i) {
    const std::uint64_t seed = repeated ? 1 : 1 + i;
    daemon::bundle::BundleEntry e;
    e.key = testing::sample_key(seed);
    e.content_fast = testing::sample_content_fast(seed);
    e.producer = "bench";
    e.codec = daemon::bundle::k_codec_zstd;
    e.raw_size = raw.size();
    e.checksum = proto::xxh3_128(proto::Bytes(raw));
    e.image = frame;
    if (!writer || !writer->add(e)) throw std::runtime_error("cannot write the bomb");
  }
  if (!writer->finish()) throw std::runtime_error("cannot write the bomb");
  ::fchmod(fd.get(), 0644);
}

std::string ms(double us) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f", us / 1000.0);
  return text;
}

void run_case(const Options& options, bool repeated, testing::SystemUsers& users) {
  testing::TempDir dir{"jitcache-bench-bomb"};
  ::chmod(dir.path().c_str(), 0755);
  std::vector<std::string> args;
  if (users.available()) args = {"--socket-group", users.group_name()};
  testing::DaemonOptions daemon_options;
  daemon_options.extra_args = args;
  testing::DaemonProcess daemon(dir, daemon_options);
  daemon.start();
  const std::string bomb = dir.file("bomb.jcb");
  write_bomb(bomb, options, repeated);
  {
    auto client = daemon.client();
    for (std::uint64_t seed = 100000; seed < 100010; ++seed) {
      const auto image = testing::sample_image(seed, 4000);
      if (!client.put(testing::sample_put(seed, image))) throw std::runtime_error("a PUT failed");
    }
  }

  // Baseline: the victim's PUTs with nothing else running.
  bench::LatencyRecorder baseline;
  std::uint64_t seed = 200000;
  {
    auto client = daemon.client();
    const auto until = Clock::now() + std::chrono::duration<double>(options.baseline_s);
    while (Clock::now() < until) {
      const auto image = testing::sample_image(++seed, 4000);
      const auto before = Clock::now();
      if (!client.put(testing::sample_put(seed, image))) throw std::runtime_error("a PUT failed");
      baseline.record(Clock::now() - before);
    }
  }

  // The attack: a child process imports the bomb, as B where it can; it reports status and time.
  int report[2];
  if (::pipe(report) != 0) throw std::runtime_error("pipe");
  auto attack = [&]() -> int {
    ::close(report[0]);
    common::UniqueFd fd(::open(bomb.c_str(), O_RDONLY | O_CLOEXEC));
    auto client = daemon.client();
    const auto before = Clock::now();
    auto reply =
        client.import_bundle(proto::ImportBundleRequest{proto::ImportTarget::own}, fd.get(), std::chrono::seconds(600));
    const double took = std::chrono::duration<double>(Clock::now() - before).count();
    const std::string line =
        std::to_string(took) + " " +
        (reply ? "imported " + std::to_string(reply->imported) + " of " + std::to_string(reply->entries)
               : "refused: " + reply.error().message) +
        "\n";
    if (::write(report[1], line.data(), line.size()) < 0) return 2;
    return 0;
  };
  const auto attack_started = Clock::now();
  pid_t attacker = -1;
  if (users.available()) {
    attacker = testing::start_as_user(users.b(), {users.group()}, attack);
  } else {
    attacker = ::fork();
    if (attacker == 0) ::_exit(attack());
  }
  ::close(report[1]);

  // The victim: PUTs until the attack ends, and one export meanwhile.
  double export_ms = -1;
  std::thread exporter([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    common::UniqueFd out(::open(dir.file("victim.jcb").c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
    auto client = daemon.client();
    const auto before = Clock::now();
    auto reply = client.export_bundle(proto::ExportBundleRequest{}, out.get(), std::chrono::seconds(600));
    export_ms = reply ? std::chrono::duration<double, std::milli>(Clock::now() - before).count() : -1;
  });
  bench::LatencyRecorder during;
  {
    auto client = daemon.client();
    int status = 0;
    while (::waitpid(attacker, &status, WNOHANG) == 0) {
      const auto image = testing::sample_image(++seed, 4000);
      const auto before = Clock::now();
      if (!client.put(testing::sample_put(seed, image))) throw std::runtime_error("a PUT failed");
      during.record(Clock::now() - before);
    }
  }
  exporter.join();
  const double attack_s = std::chrono::duration<double>(Clock::now() - attack_started).count();
  char line[512] = {};
  const ssize_t got = ::read(report[0], line, sizeof line - 1);
  ::close(report[0]);
  std::string outcome = got > 0 ? std::string(line, static_cast<std::size_t>(got)) : "no report\n";
  if (!outcome.empty() && outcome.back() == '\n') outcome.pop_back();

  auto base = baseline.summarize();
  auto attacked = during.summarize();
  std::cout << "\n"
            << (repeated ? "one entry repeated " : "distinct entries ") << options.entries << " x " << options.raw_mib
            << " MiB decoded (bundle " << std::filesystem::file_size(bomb) / 1024 << " KiB), attacker "
            << (users.available() ? "uid B (untrusted)" : "root") << "\n"
            << "  import: " << outcome.substr(outcome.find(' ') + 1) << " after "
            << outcome.substr(0, outcome.find(' ')) << " s (attack window " << attack_s << " s)\n"
            << "  victim PUT before: n=" << base.count << " p50 " << ms(base.p50_us) << " ms, p99 " << ms(base.p99_us)
            << " ms, max " << ms(base.max_us) << " ms\n"
            << "  victim PUT during: n=" << attacked.count << " p50 " << ms(attacked.p50_us) << " ms, p99 "
            << ms(attacked.p99_us) << " ms, max " << ms(attacked.max_us) << " ms\n"
            << "  victim EXPORT during: " << (export_ms < 0 ? std::string("failed") : ms(export_ms * 1000) + " ms")
            << "\n";
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  CLI::App app{"Another tenant's PUT and EXPORT latency while a bundle of zstd bombs is imported"};
  app.add_option("--entries", options.entries, "Entries in the bomb bundle");
  app.add_option("--raw-mib", options.raw_mib, "MiB each entry decodes to (at most max_frame_bytes)");
  app.add_option("--baseline", options.baseline_s, "Seconds of victim PUTs before the attack");
  app.add_flag("--smoke", options.smoke, "A small run for CI");
  CLI11_PARSE(app, argc, argv);
  if (options.smoke) {
    options.entries = 4;
    options.raw_mib = 8;
    options.baseline_s = 0.2;
  }
  const auto machine = bench::read_machine_info();
  std::cout << "machine: " << machine.cpu_model << ", " << machine.usable_cpus << " of " << machine.online_cpus
            << " CPUs, " << machine.memory_mib << " MiB, " << machine.kernel << ", load " << machine.load_average
            << "\n";
  testing::SystemUsers users;
  if (!users.available()) std::cout << "no system users (" << users.why() << "): the attacker runs as root\n";
  run_case(options, false, users);
  run_case(options, true, users);
  return 0;
}
