// What a new connection costs the daemon: connect, the first LOOKUP on a fresh connection, and a
// second LOOKUP on the same one, for one stored image, measured from a warm process (so the client's
// own first-use costs are not in it). A library hit is one new connection and one LOOKUP, so this
// separates the daemon's share of a hit from the fresh process's (docs/benchmarks.md).
//
//   bench_connection_setup SOCKET|--start-daemon [IMAGE_BYTES] [CONNECTIONS] [PAUSE_MS] [SPIN_US]
//
// SPIN_US is the client's reply_spin (transport/unix_connection.hpp; libjitcache's
// JITCACHE_REPLY_SPIN_US): how long it waits for a reply on the CPU before sleeping.
//
// PAUSE_MS idles between connections, as a daemon sees requests from separate short-lived
// processes: its threads are then asleep when the connection arrives, and waking them is part of
// the cost (on a VM, a halted vCPU takes a while to wake).
//
// Against a running jitcached (or one it starts on a temp socket); stores one synthetic image under
// a key of its own first.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include <client/src/transport/daemon_client.hpp>
#include <proto/content_digest.hpp>
#include <proto/jit_options.hpp>

#include <tests/support/daemon_process.hpp>
#include <tests/support/sample_cubin.hpp>
#include <tests/support/temp_dir.hpp>

using namespace jitcache;
using Clock = std::chrono::steady_clock;

namespace {

double microseconds(Clock::time_point from, Clock::time_point to) {
  return std::chrono::duration<double, std::micro>(to - from).count();
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(
        stderr,
        "usage: bench_connection_setup SOCKET|--start-daemon [IMAGE_BYTES] [CONNECTIONS] [PAUSE_MS] [SPIN_US]\n");
    return 2;
  }
  testing::TempDir state;
  testing::DaemonProcess daemon(state);
  client::transport::ConnectOptions options;
  options.socket_path = argv[1];
  if (options.socket_path == "--start-daemon") {
    daemon.start();
    options = daemon.connect_options();
  }
  const std::size_t size = argc > 2 ? std::stoul(argv[2]) : 4600;
  const int connections = argc > 3 ? std::stoi(argv[3]) : 30;
  const auto pause = std::chrono::milliseconds(argc > 4 ? std::stoi(argv[4]) : 0);
  options.reply_spin = std::chrono::microseconds(argc > 5 ? std::stoi(argv[5]) : 0);

  proto::KeyFields key;
  key.content = proto::content_digest(proto::as_bytes("bench_connection_setup " + std::to_string(size)));
  key.arch = "sm_90a";
  key.driver_api = 13000;
  key.driver_build = "0.0.1";
  key.options = proto::default_option_text();
  {
    auto client = client::transport::DaemonClient::connect(options);
    // An sm_90a cubin of `size` bytes: a PUT stores nothing else, and the key is for sm_90a.
    testing::CubinSpec spec;
    spec.arch_specific = true;
    const std::size_t headers = testing::min_cubin_size(spec);
    const std::vector<std::uint8_t> image =
        testing::make_cubin(spec, std::vector<std::uint8_t>(size > headers ? size - headers : 0, 7));
    proto::PutRequest put;
    put.key = key;
    put.producer = "bench_connection_setup";
    put.image = proto::Bytes(image);
    put.content_fast = proto::xxh3_128(proto::Bytes(key.content.bytes));  // every entry has a fast key
    if (!client || !client->put(put)) {
      std::fprintf(stderr, "bench_connection_setup: cannot store the image at %s\n", argv[1]);
      return 1;
    }
  }

  std::vector<double> connect_us, first_us, second_us;
  for (int i = 0; i < connections; ++i) {
    std::this_thread::sleep_for(pause);
    const auto t0 = Clock::now();
    auto client = client::transport::DaemonClient::connect(options);
    const auto t1 = Clock::now();
    if (!client) return 1;
    auto first = client->lookup(key);
    const auto t2 = Clock::now();
    auto second = client->lookup(key);
    const auto t3 = Clock::now();
    if (!first || !second || !first->has_value()) {
      std::fprintf(stderr, "bench_connection_setup: LOOKUP failed\n");
      return 1;
    }
    connect_us.push_back(microseconds(t0, t1));
    first_us.push_back(microseconds(t1, t2));
    second_us.push_back(microseconds(t2, t3));
  }
  std::printf(
      "image %zu B, %d connections, %lld ms apart, reply spin %lld us (medians): connect %.1f us, "
      "first LOOKUP on the connection %.1f us, second %.1f us\n",
      size, connections, static_cast<long long>(pause.count()), static_cast<long long>(options.reply_spin.count()),
      median(connect_us), median(first_us), median(second_us));
  return 0;
}
