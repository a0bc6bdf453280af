// How long the first reply on a fresh connection takes when the client writes its request in the
// same instant as connect (as libjitcache does), from a warm process over many connections and from
// fresh processes, each its first connection to the daemon. In a fresh process it times the same
// LOOKUP two ways: over a raw socket (the socket and the daemon only) and through libjitcache's
// transport (DaemonClient: its own first-use costs too), so a slow first hit can be placed on one
// side or the other (docs/benchmarks.md "The first reply on a fresh connection").
//
//   bench_first_reply [CONNECTIONS] [PROCESSES]
//
// Starts its own jitcached on a temp socket and stores one 4 KB image first. With
// JITCACHE_BENCH_CUINIT=1 each fresh process first loads the CUDA driver (libcuda.so.1) and calls
// cuInit, as a program that loads a module has, before it times anything: the figures with and
// without it on a GPU host separate the driver's presence from the socket's cost. Each fresh
// process also reports how often its cgroup was throttled (cpu.stat, cgroup v2) while it ran: a CPU
// quota spent by a fresh process's start-up delays its next wake-up by up to a quota period.
#include <dlfcn.h>
#include <poll.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include <client/src/transport/daemon_client.hpp>
#include <proto/messages.hpp>
#include <proto/wire.hpp>

#include <tests/support/daemon_process.hpp>
#include <tests/support/sample_entries.hpp>
#include <tests/support/temp_dir.hpp>

extern char** environ;

using namespace jitcache;
using Clock = std::chrono::steady_clock;

namespace {

constexpr std::uint64_t k_seed = 11;

double microseconds(Clock::time_point from, Clock::time_point to) {
  return std::chrono::duration<double, std::micro>(to - from).count();
}

double percentile(std::vector<double> values, double p) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  return values[std::min(values.size() - 1, static_cast<std::size_t>(p * static_cast<double>(values.size())))];
}

void print_row(const char* what, const std::vector<double>& us) {
  std::printf("  %-46s p50 %8.1f  p90 %8.1f  p99 %8.1f  max %8.1f us\n", what, percentile(us, 0.5), percentile(us, 0.9),
              percentile(us, 0.99), percentile(us, 1.0));
}

std::vector<std::uint8_t> lookup_frame() {
  proto::LookupRequest request;
  request.key = testing::sample_key(k_seed);
  const proto::Payload payload = proto::encode(request);
  proto::FrameHeader h;
  h.op = proto::Op::lookup;
  h.request_id = 1;
  h.payload_length = payload.size();
  const auto raw = proto::encode_header(h);
  std::vector<std::uint8_t> out(raw.size() + payload.size());
  std::copy(raw.begin(), raw.end(), out.begin());
  std::copy(payload.begin(), payload.end(), out.begin() + static_cast<std::ptrdiff_t>(raw.size()));
  return out;
}

bool read_exact(int fd, std::uint8_t* out, std::size_t size) {
  while (size > 0) {
    const ssize_t n = ::recv(fd, out, size, 0);
    if (n <= 0) return false;
    out += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

// One raw LOOKUP on `fd`: write, then read the whole reply; false when it is not a hit.
bool raw_lookup(int fd, const std::vector<std::uint8_t>& request) {
  if (::send(fd, request.data(), request.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(request.size())) return false;
  proto::HeaderBytes raw{};
  if (!read_exact(fd, raw.data(), raw.size())) return false;
  auto header = proto::decode_reply_header(raw, 64 << 20);
  if (!header || header->status != proto::Status::ok) return false;
  std::vector<std::uint8_t> payload(header->payload_length);
  return read_exact(fd, payload.data(), payload.size());
}

int connect_raw(const std::string& path) {
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  path.copy(addr.sun_path, sizeof(addr.sun_path) - 1);
  if (fd < 0 || ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) return -1;
  return fd;
}

// nr_throttled of a cpu.stat file; 0 where there is none.
std::uint64_t throttled_in(const std::string& path) {
  std::ifstream stat(path);
  std::string key;
  std::uint64_t value = 0;
  while (stat >> key >> value) {
    if (key == "nr_throttled") return value;
  }
  return 0;
}

// This process's cgroup's nr_throttled: cgroup v2's cpu.stat, or v1's cpu controller's; 0 where
// there is none to read.
std::uint64_t cgroup_throttled() {
  std::ifstream membership("/proc/self/cgroup");
  std::uint64_t throttled = 0;
  for (std::string line; std::getline(membership, line);) {
    const auto first = line.find(':');
    const auto second = line.find(':', first + 1);
    if (first == std::string::npos || second == std::string::npos) continue;
    const std::string controllers = line.substr(first + 1, second - first - 1);
    const std::string path = line.substr(second + 1);
    if (controllers.empty()) {
      throttled += throttled_in("/sys/fs/cgroup" + path + "/cpu.stat");
    } else if (("," + controllers + ",").find(",cpu,") != std::string::npos) {
      throttled += throttled_in("/sys/fs/cgroup/" + controllers + path + "/cpu.stat");
    }
  }
  return throttled;
}

// Loads the CUDA driver and initialises it, as a program about to load a module has; false when
// there is none.
bool init_cuda_driver() {
  void* driver = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
  if (driver == nullptr) return false;
  using CuInit = int (*)(unsigned);
  auto cu_init = reinterpret_cast<CuInit>(::dlsym(driver, "cuInit"));
  return cu_init != nullptr && cu_init(0) == 0;
}

// In a fresh process: the raw first and second LOOKUP, and the transport's first and second, the
// raw ones first unless `transport_first` (which one is the process's first use of a socket tells
// its first-use costs from the path's own).
int child(const std::string& socket_path, bool transport_first) {
  const char* cuinit = std::getenv("JITCACHE_BENCH_CUINIT");
  if (cuinit != nullptr && std::strcmp(cuinit, "1") == 0 && !init_cuda_driver()) {
    std::fprintf(stderr, "bench_first_reply: JITCACHE_BENCH_CUINIT=1 but cuInit failed or there is no libcuda.so.1\n");
    return 1;
  }
  const std::uint64_t throttled_before = cgroup_throttled();
  const auto request = lookup_frame();
  double raw_first = 0, raw_second = 0, transport_first_us = 0, transport_second = 0;
  auto raw = [&] {
    const auto t0 = Clock::now();
    const int fd = connect_raw(socket_path);
    if (fd < 0 || !raw_lookup(fd, request)) return false;
    const auto t1 = Clock::now();
    if (!raw_lookup(fd, request)) return false;
    const auto t2 = Clock::now();
    ::close(fd);
    raw_first = microseconds(t0, t1);
    raw_second = microseconds(t1, t2);
    return true;
  };
  auto transport = [&] {
    client::transport::ConnectOptions options;
    options.socket_path = socket_path;
    const auto t0 = Clock::now();
    auto client = client::transport::DaemonClient::connect(options);
    if (!client) return false;
    auto first = client->lookup(testing::sample_key(k_seed));
    const auto t1 = Clock::now();
    auto second = client->lookup(testing::sample_key(k_seed));
    const auto t2 = Clock::now();
    if (!first || !first->has_value() || !second) return false;
    transport_first_us = microseconds(t0, t1);
    transport_second = microseconds(t1, t2);
    return true;
  };
  const bool ok = transport_first ? transport() && raw() : raw() && transport();
  if (!ok) return 1;
  std::printf("%.1f %.1f %.1f %.1f %llu\n", raw_first, raw_second, transport_first_us, transport_second,
              static_cast<unsigned long long>(cgroup_throttled() - throttled_before));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 4 && std::strcmp(argv[1], "--child") == 0) return child(argv[2], std::strcmp(argv[3], "1") == 0);
  const int connections = argc > 1 ? std::stoi(argv[1]) : 2000;
  const int processes = argc > 2 ? std::stoi(argv[2]) : 100;

  testing::TempDir state;
  testing::DaemonProcess daemon(state);
  daemon.start();
  {
    auto client = daemon.client();
    const auto image = testing::sample_image(k_seed, 4096);
    if (!client.put(testing::sample_put(k_seed, image))) {
      std::fprintf(stderr, "bench_first_reply: cannot store the image\n");
      return 1;
    }
  }
  const auto request = lookup_frame();

  std::vector<double> connect_us, first_us, second_us;
  for (int i = 0; i < connections; ++i) {
    const auto t0 = Clock::now();
    const int fd = connect_raw(daemon.socket_path());
    const auto t1 = Clock::now();
    if (fd < 0 || !raw_lookup(fd, request)) {
      std::fprintf(stderr, "bench_first_reply: LOOKUP %d failed\n", i);
      return 1;
    }
    const auto t2 = Clock::now();
    if (!raw_lookup(fd, request)) return 1;
    const auto t3 = Clock::now();
    ::close(fd);
    connect_us.push_back(microseconds(t0, t1));
    first_us.push_back(microseconds(t1, t2));
    second_us.push_back(microseconds(t2, t3));
  }
  std::printf("%d fresh connections from one warm process, 4 KB LOOKUP hit written at once after connect:\n",
              connections);
  print_row("connect", connect_us);
  print_row("first LOOKUP (write to whole reply)", first_us);
  print_row("second LOOKUP on the same connection", second_us);

  // [0]: the raw socket is the process's first use of a socket; [1]: the transport is.
  std::vector<double> raw_first[2], raw_second[2], client_first[2], client_second[2];
  int throttled_processes = 0;
  for (int i = 0; i < processes; ++i) {
    int out[2];
    if (::pipe(out) != 0) return 1;
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
    posix_spawn_file_actions_addclose(&actions, out[0]);
    const int order = i % 2;
    std::string self = argv[0], flag = "--child", path = daemon.socket_path(), transport_first = std::to_string(order);
    char* child_argv[] = {self.data(), flag.data(), path.data(), transport_first.data(), nullptr};
    pid_t pid = -1;
    const int spawned = posix_spawn(&pid, argv[0], &actions, nullptr, child_argv, environ);
    posix_spawn_file_actions_destroy(&actions);
    ::close(out[1]);
    std::string text;
    char buffer[256];
    for (ssize_t n; (n = ::read(out[0], buffer, sizeof(buffer))) > 0;) text.append(buffer, static_cast<std::size_t>(n));
    ::close(out[0]);
    int status = 0;
    if (spawned != 0 || ::waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      std::fprintf(stderr, "bench_first_reply: child %d failed\n", i);
      return 1;
    }
    double a = 0, b = 0, c = 0, d = 0;
    unsigned long long throttles = 0;
    if (std::sscanf(text.c_str(), "%lf %lf %lf %lf %llu", &a, &b, &c, &d, &throttles) != 5) return 1;
    if (throttles > 0) ++throttled_processes;
    raw_first[order].push_back(a);
    raw_second[order].push_back(b);
    client_first[order].push_back(c);
    client_second[order].push_back(d);
  }
  const char* cuinit = std::getenv("JITCACHE_BENCH_CUINIT");
  std::printf(
      "%d fresh processes%s, each its first connection to the daemon (%d throttled by their cgroup while timed):\n",
      processes, cuinit != nullptr && std::strcmp(cuinit, "1") == 0 ? " after cuInit" : "", throttled_processes);
  print_row("raw socket first: connect + first LOOKUP", raw_first[0]);
  print_row("raw socket first: second LOOKUP", raw_second[0]);
  print_row("then DaemonClient: connect + first LOOKUP", client_first[0]);
  print_row("then DaemonClient: second LOOKUP", client_second[0]);
  print_row("DaemonClient first: connect + first LOOKUP", client_first[1]);
  print_row("DaemonClient first: second LOOKUP", client_second[1]);
  print_row("then raw socket: connect + first LOOKUP", raw_first[1]);
  print_row("then raw socket: second LOOKUP", raw_second[1]);
  return 0;
}
