// Hostile timing at the socket: whatever the moment a client's bytes arrive relative to the daemon's
// reads (with the request in the same instant as connect, one byte at a time, split at every
// position of a frame, pipelined, half-closed, with descriptors or out-of-band bytes), the daemon
// answers every complete request at once and never waits for an event that is not coming
// (daemon/server/connection.hpp, m_input_drained). The idle timeout here is long, so a request left
// unread shows as a missing answer, not as a slow one.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <common/descriptor_send.hpp>
#include <proto/messages.hpp>
#include <proto/wire.hpp>

#include <tests/support/daemon_process.hpp>
#include <tests/support/eventually.hpp>
#include <tests/support/sample_entries.hpp>
#include <tests/support/temp_dir.hpp>
#include <tests/support/test_skip.hpp>

using namespace jitcache;
using testing::DaemonOptions;
using testing::DaemonProcess;
using testing::TempDir;
using Clock = std::chrono::steady_clock;

namespace {

// Far longer than any answer takes: a request the daemon failed to read waits this long.
const std::vector<std::string> k_long_idle{"--idle-timeout", "30s", "--read-deadline", "30s"};
// How long a complete request may take to be answered on a loaded 2-core machine.
constexpr auto k_prompt = std::chrono::seconds(3);

// A connection to the daemon, or -1; no Catch2 assertion, so peers on other threads may call it.
int open_connection(const std::string& path) {
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  path.copy(addr.sun_path, sizeof(addr.sun_path) - 1);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

int connect_raw(const std::string& path) {
  const int fd = open_connection(path);
  REQUIRE(fd >= 0);
  return fd;
}

struct Fd {
  int fd;
  explicit Fd(int f) : fd(f) {}
  ~Fd() { ::close(fd); }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
};

void send_all(int fd, const std::uint8_t* data, std::size_t size, int flags = 0) {
  while (size > 0) {
    const ssize_t n = ::send(fd, data, size, flags | MSG_NOSIGNAL);
    REQUIRE(n > 0);
    data += n;
    size -= static_cast<std::size_t>(n);
  }
}

std::vector<std::uint8_t> frame(proto::Op op, std::uint32_t id, const proto::Payload& payload = {},
                                std::uint16_t flags = 0) {
  proto::FrameHeader h;
  h.op = op;
  h.flags = flags;
  h.request_id = id;
  h.payload_length = payload.size();
  const auto raw = proto::encode_header(h);
  std::vector<std::uint8_t> out(raw.begin(), raw.end());
  out.insert(out.end(), payload.begin(), payload.end());
  return out;
}

std::vector<std::uint8_t> lookup_frame(std::uint32_t id, std::uint64_t seed) {
  proto::LookupRequest request;
  request.key = testing::sample_key(seed);
  return frame(proto::Op::lookup, id, proto::encode(request));
}

// Reads exactly `size` bytes by `deadline`; false on EOF, error or time out.
bool read_exact(int fd, std::uint8_t* out, std::size_t size, Clock::time_point deadline) {
  while (size > 0) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left < 0) return false;
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(left) + 1) <= 0) return false;
    const ssize_t n = ::recv(fd, out, size, MSG_DONTWAIT);
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) continue;
    if (n <= 0) return false;
    out += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

// The last `bytes` of a file (a daemon's log for a failure's message).
std::string file_tail(const std::string& path, std::size_t bytes) {
  std::ifstream in(path, std::ios::binary);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return text.size() > bytes ? text.substr(text.size() - bytes) : text;
}

struct Answer {
  proto::FrameHeader header;
  std::vector<std::uint8_t> payload;
};

std::optional<Answer> read_answer(int fd, Clock::time_point deadline) {
  proto::HeaderBytes raw{};
  if (!read_exact(fd, raw.data(), raw.size(), deadline)) return std::nullopt;
  auto header = proto::decode_reply_header(raw, 64 << 20);
  if (!header) return std::nullopt;  // checked by the caller: no Catch2 assertion off its thread
  Answer answer{*header, std::vector<std::uint8_t>(header->payload_length)};
  if (!read_exact(fd, answer.payload.data(), answer.payload.size(), deadline)) return std::nullopt;
  return answer;
}

// True when the daemon closes the connection (EOF or reset) by `deadline`, reading what comes before.
bool closed_by(int fd, Clock::time_point deadline) {
  std::uint8_t buffer[4096];
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left < 0) return false;
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(left) + 1) <= 0) return false;
    const ssize_t n = ::recv(fd, buffer, sizeof(buffer), MSG_DONTWAIT);
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) return true;
  }
}

// Answers to `ids`, in order, each promptly.
void expect_answers(int fd, const std::vector<std::uint32_t>& ids) {
  for (const std::uint32_t id : ids) {
    auto answer = read_answer(fd, Clock::now() + k_prompt);
    INFO("request id " << id);
    REQUIRE(answer);
    CHECK(answer->header.request_id == id);
  }
}

struct Fixture {
  static DaemonOptions options(std::vector<std::string> args) {
    DaemonOptions options;
    options.extra_args = std::move(args);
    return options;
  }
  TempDir dir;
  DaemonProcess daemon;
  std::uint64_t seed = 7;
  explicit Fixture(std::vector<std::string> args = k_long_idle) : daemon(dir, options(std::move(args))) {
    daemon.start();
    auto client = daemon.client();
    const auto image = testing::sample_image(seed, 4096);
    REQUIRE(client.put(testing::sample_put(seed, image)));
  }
};

double percentile(std::vector<double> values, double p) {
  std::sort(values.begin(), values.end());
  return values[std::min(values.size() - 1, static_cast<std::size_t>(p * static_cast<double>(values.size())))];
}

std::size_t open_descriptors(pid_t pid) {
  std::size_t count = 0;
  for ([[maybe_unused]] const auto& entry :
       std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/fd")) {
    ++count;
  }
  return count;
}

}  // namespace

TEST_CASE("request timing: 1500 fresh connections that write at once, in every split, are each answered at once") {
  Fixture f;
  std::mt19937 random(std::random_device{}());
  const auto seed = random();
  random.seed(seed);
  INFO("random seed " << seed);
  const auto lookup = lookup_frame(1, f.seed);
  std::vector<double> latencies;
  for (int i = 0; i < 1500; ++i) {
    const auto started = Clock::now();
    Fd c(connect_raw(f.daemon.socket_path()));
    // Most write the whole frame at once; others split it at a random byte after a random pause,
    // so that the second part lands before, during or after the daemon's first read.
    if (i % 3 == 0) {
      send_all(c.fd, lookup.data(), lookup.size());
    } else {
      const std::size_t cut = 1 + random() % (lookup.size() - 1);
      send_all(c.fd, lookup.data(), cut);
      if (i % 3 == 2) std::this_thread::sleep_for(std::chrono::microseconds(random() % 300));
      send_all(c.fd, lookup.data() + cut, lookup.size() - cut);
    }
    auto answer = read_answer(c.fd, Clock::now() + k_prompt);
    INFO("connection " << i);
    REQUIRE(answer);
    REQUIRE(answer->header.status == proto::Status::ok);
    latencies.push_back(std::chrono::duration<double, std::milli>(Clock::now() - started).count());
  }
  std::printf("fresh connection, connect to first LOOKUP hit answered (ms): p50 %.3f p99 %.3f max %.3f\n",
              percentile(latencies, 0.5), percentile(latencies, 0.99), percentile(latencies, 1.0));
}

TEST_CASE("request timing: pipelined requests split at every byte, with and without a pause, are all answered") {
  Fixture f;
  std::vector<std::uint8_t> stream;
  for (const auto& part : {frame(proto::Op::ping, 1), lookup_frame(2, f.seed), frame(proto::Op::ping, 3)}) {
    stream.insert(stream.end(), part.begin(), part.end());
  }
  for (const int pause_us : {0, 200}) {
    for (std::size_t cut = 1; cut < stream.size(); ++cut) {
      INFO("cut at byte " << cut << ", pause " << pause_us << " us");
      Fd c(connect_raw(f.daemon.socket_path()));
      send_all(c.fd, stream.data(), cut);
      if (pause_us > 0) std::this_thread::sleep_for(std::chrono::microseconds(pause_us));
      send_all(c.fd, stream.data() + cut, stream.size() - cut);
      expect_answers(c.fd, {1, 2, 3});
    }
  }
}

TEST_CASE("request timing: a PUT answered on another thread amid pipelined requests, split anywhere, keeps them all") {
  // The PUT's payload is larger than the connection's 4 KiB input buffer (read straight into the
  // request's buffer), and it is answered on the writer lane: the event loop runs meanwhile, with
  // the requests behind it already there or still to come.
  Fixture f;
  const auto image = testing::sample_image(41, 6000);
  std::vector<std::uint8_t> stream;
  for (const auto& part :
       {frame(proto::Op::ping, 1), frame(proto::Op::put, 2, proto::encode(testing::sample_put(41, image))),
        lookup_frame(3, f.seed), frame(proto::Op::ping, 4)}) {
    stream.insert(stream.end(), part.begin(), part.end());
  }
  // Every byte of the frames' edges (the first 64 bytes, and 64 either side of the PUT's end), and
  // every 97th byte between.
  const std::size_t put_end = stream.size() - lookup_frame(3, f.seed).size() - proto::k_header_size;
  for (std::size_t cut = 1; cut < stream.size(); ++cut) {
    const bool edge = cut < 64 || (cut + 64 > put_end && cut < put_end + 64) || cut + 64 > stream.size();
    if (!edge && cut % 97 != 0) continue;
    INFO("cut at byte " << cut << " of " << stream.size());
    Fd c(connect_raw(f.daemon.socket_path()));
    send_all(c.fd, stream.data(), cut);
    if (cut % 2 == 0) std::this_thread::sleep_for(std::chrono::microseconds(100));
    send_all(c.fd, stream.data() + cut, stream.size() - cut);
    expect_answers(c.fd, {1, 2, 3, 4});
  }
}

TEST_CASE("request timing: requests sent one byte at a time with random gaps are answered as each completes") {
  Fixture f;
  std::mt19937 random(std::random_device{}());
  const auto seed = random();
  random.seed(seed);
  INFO("random seed " << seed);
  for (int round = 0; round < 6; ++round) {
    Fd c(connect_raw(f.daemon.socket_path()));
    for (std::uint32_t id = 1; id <= 3; ++id) {
      const auto bytes = id == 2 ? lookup_frame(id, f.seed) : frame(proto::Op::ping, id);
      for (const std::uint8_t byte : bytes) {
        send_all(c.fd, &byte, 1);
        const auto gap = random() % 4;  // none, a yield, or a short sleep
        if (gap == 1) std::this_thread::yield();
        if (gap >= 2) std::this_thread::sleep_for(std::chrono::microseconds(random() % 400));
      }
      expect_answers(c.fd, {id});
    }
  }
}

TEST_CASE("request timing: many requests in one write, and a half-close right after them, are all answered") {
  Fixture f;
  std::vector<std::uint8_t> stream;
  std::vector<std::uint32_t> ids;
  for (std::uint32_t id = 1; id <= 200; ++id) {
    const auto part = id % 2 == 0 ? lookup_frame(id, f.seed) : frame(proto::Op::ping, id);
    stream.insert(stream.end(), part.begin(), part.end());
    ids.push_back(id);
  }
  SECTION("kept open") {
    Fd c(connect_raw(f.daemon.socket_path()));
    send_all(c.fd, stream.data(), stream.size());
    expect_answers(c.fd, ids);
  }
  SECTION("half-closed") {
    Fd c(connect_raw(f.daemon.socket_path()));
    send_all(c.fd, stream.data(), stream.size());
    REQUIRE(::shutdown(c.fd, SHUT_WR) == 0);
    expect_answers(c.fd, ids);
    CHECK(closed_by(c.fd, Clock::now() + k_prompt));
  }
}

TEST_CASE("request timing: descriptors sent with no op or the wrong op are closed, and the requests answered") {
  Fixture f;
  const std::size_t before = open_descriptors(f.daemon.pid());
  const int spare = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  REQUIRE(spare >= 0);
  for (int round = 0; round < 50; ++round) {
    Fd c(connect_raw(f.daemon.socket_path()));
    // A PING without the flag that says a descriptor comes, one with it, a LOOKUP with it, and a
    // descriptor on a byte in the middle of a header.
    const auto ping = frame(proto::Op::ping, 1);
    REQUIRE(common::send_bytes_with_descriptor(c.fd, proto::Bytes(ping), spare, 0) ==
            static_cast<ssize_t>(ping.size()));
    const auto flagged = frame(proto::Op::ping, 2, {}, proto::k_flag_request_fd);
    REQUIRE(common::send_bytes_with_descriptor(c.fd, proto::Bytes(flagged), spare, 0) ==
            static_cast<ssize_t>(flagged.size()));
    proto::LookupRequest request;
    request.key = testing::sample_key(f.seed);
    const auto lookup = frame(proto::Op::lookup, 3, proto::encode(request), proto::k_flag_request_fd);
    REQUIRE(common::send_bytes_with_descriptor(c.fd, proto::Bytes(lookup), spare, 0) ==
            static_cast<ssize_t>(lookup.size()));
    const auto last = frame(proto::Op::ping, 4);
    send_all(c.fd, last.data(), 10);
    REQUIRE(common::send_bytes_with_descriptor(c.fd, proto::Bytes(last).subspan(10, 1), spare, 0) == 1);
    send_all(c.fd, last.data() + 11, last.size() - 11);
    expect_answers(c.fd, {1, 2, 3, 4});
    // 64 descriptors on one PING's bytes: more than the daemon takes from one read.
    const auto many = frame(proto::Op::ping, 5);
    std::vector<int> fds(64, spare);
    iovec iov{const_cast<std::uint8_t*>(many.data()), many.size()};
    std::vector<char> control(CMSG_SPACE(sizeof(int) * fds.size()));
    msghdr message{};
    message.msg_iov = &iov;
    message.msg_iovlen = 1;
    message.msg_control = control.data();
    message.msg_controllen = control.size();
    cmsghdr* cmsg = CMSG_FIRSTHDR(&message);
    cmsg->cmsg_level = SOL_SOCKET;
    cmsg->cmsg_type = SCM_RIGHTS;
    cmsg->cmsg_len = CMSG_LEN(sizeof(int) * fds.size());
    std::memcpy(CMSG_DATA(cmsg), fds.data(), sizeof(int) * fds.size());
    REQUIRE(::sendmsg(c.fd, &message, MSG_NOSIGNAL) == static_cast<ssize_t>(many.size()));
    expect_answers(c.fd, {5});
  }
  ::close(spare);
  // Every descriptor sent is closed once the daemon has seen the last connection go (3400 were sent;
  // a few of the daemon's own come and go: allow those).
  CHECK(testing::eventually([&] { return open_descriptors(f.daemon.pid()) <= before + 4; }, std::chrono::seconds(5)));
}

TEST_CASE("request timing: out-of-band bytes between pipelined requests never leave a request unread") {
  // MSG_OOB on a Unix stream socket: a read stops at the out-of-band mark with bytes still behind
  // it, so a short read does not prove the socket empty (connection.hpp, m_input_drained). The
  // daemon is stopped (SIGSTOP) while its connection waits for a request, so that the request, the
  // out-of-band byte and the request after it are all there, behind one readiness edge, when it
  // goes on: the read that takes the first stops at the mark, and the second is answered only if
  // the wait after it sees the bytes already there.
  Fixture f;
  for (std::uint32_t round = 0; round < 5; ++round) {
    Fd c(connect_raw(f.daemon.socket_path()));
    const auto warm = frame(proto::Op::ping, 1);
    send_all(c.fd, warm.data(), warm.size());
    expect_answers(c.fd, {1});
    std::this_thread::sleep_for(std::chrono::milliseconds(5));  // the connection waits for readiness
    REQUIRE(::kill(f.daemon.pid(), SIGSTOP) == 0);
    const auto first = frame(proto::Op::ping, 2);
    const auto second = frame(proto::Op::ping, 3);
    send_all(c.fd, first.data(), first.size());
    const std::uint8_t junk = 0x55;
    const bool sent_oob = ::send(c.fd, &junk, 1, MSG_OOB | MSG_NOSIGNAL) == 1;
    send_all(c.fd, second.data(), second.size());
    REQUIRE(::kill(f.daemon.pid(), SIGCONT) == 0);
    if (!sent_oob) JITCACHE_SKIP("this kernel has no MSG_OOB on Unix sockets");
    INFO("round " << round);
    expect_answers(c.fd, {2, 3});
  }
}

TEST_CASE("request timing: a hangup (SIGHUP) in the middle of a trickled request drains as SIGTERM does, and exits 0") {
  for (const int signal_number : {SIGHUP, SIGTERM}) {
    INFO("signal " << signal_number);
    Fixture f;
    Fd c(connect_raw(f.daemon.socket_path()));
    const auto lookup = lookup_frame(9, f.seed);
    // Half the request, one byte at a time, then the signal, then the rest.
    for (std::size_t i = 0; i < lookup.size() / 2; ++i) send_all(c.fd, &lookup[i], 1);
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    REQUIRE(::kill(f.daemon.pid(), signal_number) == 0);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    for (std::size_t i = lookup.size() / 2; i < lookup.size(); ++i) send_all(c.fd, &lookup[i], 1);
    auto answer = read_answer(c.fd, Clock::now() + k_prompt);
    REQUIRE(answer);
    CHECK(answer->header.request_id == 9);
    CHECK(answer->header.status == proto::Status::ok);
    CHECK(closed_by(c.fd, Clock::now() + k_prompt));
    CHECK(f.daemon.stop() == 0);
  }
}

namespace {
std::uint64_t resident_kib(pid_t pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stoull(line.substr(6));
  }
  return 0;
}
}  // namespace

TEST_CASE("request timing: peers that pipeline 1 MiB LOOKUPs and never read hold little memory and slow no one") {
  Fixture f({"--idle-timeout", "30s", "--read-deadline", "30s", "--write-deadline", "2s"});
  constexpr std::uint64_t big = 99;
  {
    auto client = f.daemon.client();
    const auto image = testing::sample_image(big, 1 << 20);
    REQUIRE(client.put(testing::sample_put(big, image)));
  }
  const std::uint64_t rss_before = resident_kib(f.daemon.pid());
  std::atomic<bool> stop{false};
  std::vector<std::thread> hostile;
  for (int t = 0; t < 4; ++t) {
    hostile.emplace_back([&] {
      const auto request = lookup_frame(1, big);
      while (!stop.load()) {
        const int fd = open_connection(f.daemon.socket_path());
        if (fd < 0) continue;
        Fd c(fd);
        // Non-blocking: once the daemon stops reading, the sends fail and are tried again until the
        // daemon drops the connection at its write deadline.
        while (!stop.load()) {
          const ssize_t n = ::send(c.fd, request.data(), request.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
          if (n < 0 && errno != EAGAIN) break;
          if (n < 0) std::this_thread::sleep_for(std::chrono::milliseconds(5));
        }
      }
    });
  }
  std::vector<double> latencies;
  auto client = f.daemon.client();
  const auto until = Clock::now() + std::chrono::seconds(3);
  while (Clock::now() < until) {
    const auto started = Clock::now();
    auto found = client.lookup(testing::sample_key(f.seed));
    REQUIRE(found);
    REQUIRE(found->has_value());
    latencies.push_back(std::chrono::duration<double, std::milli>(Clock::now() - started).count());
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  const std::uint64_t rss_during = resident_kib(f.daemon.pid());
  stop = true;
  for (auto& t : hostile) t.join();
  std::printf("beside 4 peers that never read: %zu LOOKUPs p50 %.3f ms max %.3f ms; daemon RSS %llu -> %llu KiB\n",
              latencies.size(), percentile(latencies, 0.5), percentile(latencies, 1.0),
              static_cast<unsigned long long>(rss_before), static_cast<unsigned long long>(rss_during));
  CHECK(percentile(latencies, 0.99) < 200);
  CHECK(rss_during < rss_before + 64 * 1024);
}

TEST_CASE("request timing: SIGTERM amid hostile peers at the descriptor limit drains within drain_timeout, exits 0") {
  // At the connections its descriptor limit allows (max_connections is lowered to fit it; more
  // connections than that, answered busy), two peers whose 1 MiB replies are stuck because they
  // never read, and one that has sent part of a request: the drain answers the trickler once the
  // rest comes, cuts the rest at drain_timeout and exits 0.
  TempDir dir;
  DaemonOptions options;
  options.extra_args = {"--idle-timeout",   "30s", "--read-deadline", "30s",
                        "--write-deadline", "30s", "--drain-timeout", "2s"};
  options.descriptor_limit = std::make_pair(std::uint64_t{512}, std::uint64_t{512});
  options.log_level = "debug";  // a failure below shows why the daemon closed the trickler
  DaemonProcess daemon(dir, options);
  daemon.start();
  constexpr std::uint64_t big = 99;
  {
    auto client = daemon.client();
    const auto image = testing::sample_image(big, 1 << 20);
    auto put = client.put(testing::sample_put(big, image));
    INFO((put ? std::string() : put.error().message));
    REQUIRE(put);
  }
  std::vector<std::unique_ptr<Fd>> stuck;
  const auto request = lookup_frame(1, big);
  for (int i = 0; i < 2; ++i) {
    stuck.push_back(std::make_unique<Fd>(connect_raw(daemon.socket_path())));
    for (int j = 0; j < 8; ++j) {
      if (::send(stuck.back()->fd, request.data(), request.size(), MSG_DONTWAIT | MSG_NOSIGNAL) < 0) break;
    }
  }
  // Rationale: admitted, and answered once, before the 300 come: the daemon admits connections in
  // the order its workers reach them, not the order they connected, so a trickler that has only
  // connected may be the one answered busy when a worker is late (as on a loaded CI machine).
  Fd trickler(connect_raw(daemon.socket_path()));
  const auto first = frame(proto::Op::ping, 4);
  send_all(trickler.fd, first.data(), first.size());
  expect_answers(trickler.fd, {4});
  const auto ping = frame(proto::Op::ping, 5);
  send_all(trickler.fd, ping.data(), 10);
  std::vector<std::unique_ptr<Fd>> held;
  for (int i = 0; i < 300; ++i) held.push_back(std::make_unique<Fd>(connect_raw(daemon.socket_path())));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));

  const auto started = Clock::now();
  REQUIRE(::kill(daemon.pid(), SIGTERM) == 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  const ssize_t rest = ::send(trickler.fd, ping.data() + 10, ping.size() - 10, MSG_NOSIGNAL);
  if (rest != static_cast<ssize_t>(ping.size() - 10)) {
    const int error = errno;
    INFO("the rest of the trickler's PING: send returned "
         << rest << " (" << std::strerror(error) << "); the daemon is " << (daemon.running() ? "running" : "gone")
         << "; its log:\n"
         << file_tail(daemon.log_path(), 6000));
    FAIL("the daemon closed the trickler, which had sent 10 bytes of a request before the drain");
  }
  expect_answers(trickler.fd, {5});
  CHECK(daemon.stop(std::chrono::seconds(20)) == 0);
  const double seconds = std::chrono::duration<double>(Clock::now() - started).count();
  std::printf("drain amid hostile peers at the descriptor limit: exited 0 after %.2f s (drain_timeout 2 s)\n", seconds);
  CHECK(seconds < 6);
}

TEST_CASE(
    "request timing: bytes that arrive right at the idle or read deadline are answered or cut cleanly, never left") {
  // The watchdog closing the connection and the read taking the bytes race on one thread: either
  // the request is answered whole or the connection is closed at once; it is never left waiting.
  Fixture f({"--idle-timeout", "300ms", "--read-deadline", "300ms"});
  constexpr int k_offsets = 9;  // -20 ms to +20 ms around the deadline, 5 ms apart
  std::atomic<int> answered{0}, closed{0}, left{0};
  std::vector<std::thread> peers;
  for (int offset = 0; offset < k_offsets; ++offset) {
    for (const bool header_first : {false, true}) {
      peers.emplace_back([&, offset, header_first] {
        const auto request = lookup_frame(7, f.seed);
        const int fd = open_connection(f.daemon.socket_path());
        if (fd < 0) {
          ++left;  // counted as a failure
          return;
        }
        const auto at = std::chrono::milliseconds(280 + 5 * offset);
        // Either the whole request at the idle deadline, or the header at once and the payload at
        // the read deadline.
        if (header_first && ::send(fd, request.data(), proto::k_header_size, MSG_NOSIGNAL) != proto::k_header_size) {
          ++left;
          ::close(fd);
          return;
        }
        std::this_thread::sleep_for(at);
        const std::size_t from = header_first ? proto::k_header_size : 0;
        const bool sent = ::send(fd, request.data() + from, request.size() - from, MSG_NOSIGNAL) > 0;
        auto answer = sent ? read_answer(fd, Clock::now() + k_prompt) : std::nullopt;
        if (answer) {
          ++answered;
        } else if (!sent || closed_by(fd, Clock::now() + k_prompt)) {
          ++closed;
        } else {
          ++left;
        }
        ::close(fd);
      });
    }
  }
  for (auto& peer : peers) peer.join();
  std::printf("at the deadline: %d answered, %d cut, %d left waiting\n", answered.load(), closed.load(), left.load());
  CHECK(left.load() == 0);
  CHECK(answered.load() + closed.load() == 2 * k_offsets);
  Fd after(connect_raw(f.daemon.socket_path()));
  const auto ping = frame(proto::Op::ping, 8);
  send_all(after.fd, ping.data(), ping.size());
  expect_answers(after.fd, {8});
}
