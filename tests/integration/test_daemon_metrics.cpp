// The metrics endpoint (metrics_listen, docs/operations.md "Monitoring") against the real jitcached:
// off by default, refused on a non-loopback address, and, when on, scraped over plain HTTP before
// and after protocol traffic (PUT, LOOKUP hits and misses, REPORT_FAILURE) to check that the
// figures move as they should; it stops with the daemon. Silent and trickling connections cannot
// keep a scrape out; a Unix socket endpoint has the main socket's mode and group; uids appear as
// labels only with metrics_per_uid.
#include <catch2/catch.hpp>

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <tests/support/daemon_process.hpp>
#include <tests/support/http_get.hpp>
#include <tests/support/sample_entries.hpp>
#include <tests/support/system_users.hpp>
#include <tests/support/temp_dir.hpp>
#include <tests/support/test_skip.hpp>

using namespace jitcache;
using testing::DaemonOptions;
using testing::DaemonProcess;
using testing::TempDir;

namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The port the daemon logged ("metrics on http://127.0.0.1:<port>/metrics"); nullopt: no such line.
std::optional<std::uint16_t> logged_metrics_port(const DaemonProcess& daemon) {
  const std::string log = read_file(daemon.log_path());
  constexpr std::string_view marker = "metrics on http://127.0.0.1:";
  const auto at = log.find(marker);
  if (at == std::string::npos) return std::nullopt;
  return static_cast<std::uint16_t>(std::stoul(log.substr(at + marker.size())));
}

// The value of one sample, named with its labels as the exposition writes them; nullopt: absent.
std::optional<double> sample(const std::string& exposition, const std::string& series) {
  std::istringstream lines(exposition);
  for (std::string line; std::getline(lines, line);) {
    if (line.size() > series.size() && line.compare(0, series.size(), series) == 0 && line[series.size()] == ' ') {
      return std::stod(line.substr(series.size() + 1));
    }
  }
  return std::nullopt;
}

// Starts `daemon` (metrics on a loopback address) and returns the port it logged; fails the test
// when it logged none.
std::uint16_t start_and_find_metrics_port(DaemonProcess& daemon) {
  daemon.start();
  const auto port = logged_metrics_port(daemon);
  REQUIRE(port.has_value());
  return *port;
}

double value(const std::string& exposition, const std::string& series) {
  auto v = sample(exposition, series);
  INFO("series " << series);
  REQUIRE(v.has_value());
  return *v;
}

std::string scrape(std::uint16_t port) {
  auto reply = testing::http_get(port, "/metrics");
  REQUIRE(reply.has_value());
  REQUIRE(reply->status == 200);
  CHECK(reply->headers.find("content-type: text/plain; version=0.0.4") != std::string::npos);
  return reply->body;
}

DaemonOptions with_metrics(const std::string& listen) {
  DaemonOptions options;
  options.extra_args = {"--metrics-listen", listen};
  options.log_level = "info";  // the bound port is logged at info
  return options;
}

proto::ReportFailureRequest report_for(std::uint64_t seed, std::uint32_t cu_result) {
  proto::ReportFailureRequest request;
  request.key = testing::sample_key(seed);
  request.cu_result = cu_result;
  request.stage = proto::FailureStage::image;
  request.detail = "test";
  return request;
}

}  // namespace

TEST_CASE("metrics: the endpoint is off by default") {
  TempDir dir;
  DaemonOptions options;
  options.log_level = "info";
  DaemonProcess daemon(dir, options);
  daemon.start();
  CHECK_FALSE(logged_metrics_port(daemon).has_value());
  CHECK(read_file(daemon.log_path()).find("metrics on") == std::string::npos);
  CHECK(daemon.stop() == 0);
}

TEST_CASE("metrics: a non-loopback address is refused at start with a clear error") {
  TempDir dir;
  DaemonProcess daemon(dir);
  for (const char* address : {"0.0.0.0:9464", "10.1.2.3:9464", "[::]:9464"}) {
    INFO(address);
    auto result = daemon.run_to_exit({"--foreground", "--socket", daemon.socket_path(), "--state-dir",
                                      daemon.state_dir(), "--metrics-listen", address},
                                     std::chrono::seconds(20));
    CHECK(result.status == 2);
    CHECK_THAT(result.output, Catch::Contains("metrics-listen") && Catch::Contains("not a loopback address"));
  }
  // The same through the environment.
  DaemonOptions options;
  options.extra_env = {{"JITCACHE_METRICS_LISTEN", "0.0.0.0:9464"}};
  DaemonProcess from_env(dir, options);
  auto result =
      from_env.run_to_exit({"--foreground", "--socket", from_env.socket_path(), "--state-dir", from_env.state_dir()},
                           std::chrono::seconds(20));
  CHECK(result.status == 2);
  CHECK_THAT(result.output, Catch::Contains("JITCACHE_METRICS_LISTEN") && Catch::Contains("not a loopback address"));
}

TEST_CASE("metrics: a scrape shows the figures moving with PUT, LOOKUP and REPORT_FAILURE traffic") {
  TempDir dir;
  DaemonProcess daemon(dir, with_metrics("127.0.0.1:0"));
  const std::uint16_t port = start_and_find_metrics_port(daemon);
  REQUIRE(port != 0);

  const std::string before = scrape(port);
  CHECK(before.find("# TYPE jitcache_lookup_hits_total counter") != std::string::npos);
  CHECK(before.find("# HELP jitcache_request_duration_seconds ") != std::string::npos);
  CHECK(before.find("# TYPE jitcache_request_duration_seconds histogram") != std::string::npos);
  CHECK(value(before, "jitcache_lookup_hits_total") == 0);
  CHECK(value(before, "jitcache_lookup_misses_total{reason=\"not_found\"}") == 0);
  CHECK(value(before, "jitcache_namespace_stored_bytes{namespace=\"shared\"}") == 0);
  CHECK(value(before, "jitcache_load_failures_total{cu_result=\"209\",name=\"CUDA_ERROR_NO_BINARY_FOR_GPU\"}") == 0);

  {
    auto client = daemon.client();
    REQUIRE(client.hello("test_daemon_metrics"));
    const auto image_1 = testing::sample_image(1, 40'000);
    const auto image_2 = testing::sample_image(2, 8'000);
    REQUIRE(client.put(testing::sample_put(1, image_1)));
    REQUIRE(client.put(testing::sample_put(2, image_2)));
    for (int i = 0; i < 3; ++i) {
      auto hit = client.lookup(testing::sample_key(1));
      REQUIRE(hit);
      REQUIRE(hit->has_value());
    }
    auto miss = client.lookup(testing::sample_key(99));
    REQUIRE(miss);
    REQUIRE_FALSE(miss->has_value());
    // A load failure quarantines entry 2; its next LOOKUP misses as quarantined.
    auto reported = client.report_failure(report_for(2, 209));
    REQUIRE(reported);
    REQUIRE(reported->has_value());
    auto odd_code = client.report_failure(report_for(1, 123456));
    REQUIRE(odd_code);
    auto quarantined = client.lookup(testing::sample_key(2));
    REQUIRE(quarantined);
    REQUIRE_FALSE(quarantined->has_value());

    // While this client is connected it is counted as open (the gauge is read at scrape time).
    const std::string during = scrape(port);
    CHECK(value(during, "jitcache_connections") >= 1);
  }

  // The store's figures are read at most every 2 s (store_figures.hpp): wait for them to follow.
  std::string after;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  for (;;) {
    after = scrape(port);
    if (value(after, "jitcache_entries") == 2 || std::chrono::steady_clock::now() > deadline) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }

  CHECK(value(after, "jitcache_puts_total") == 2);
  CHECK(value(after, "jitcache_put_bytes_total") == 48'000);
  CHECK(value(after, "jitcache_lookup_hits_total") == 3);
  CHECK(value(after, "jitcache_served_bytes_total") == 3 * 40'000);
  CHECK(value(after, "jitcache_lookup_misses_total{reason=\"not_found\"}") == 1);
  CHECK(value(after, "jitcache_lookup_misses_total{reason=\"quarantined\"}") == 1);
  CHECK(value(after, "jitcache_lookup_misses_total{reason=\"corrupt\"}") == 0);
  CHECK(value(after, "jitcache_load_failures_total{cu_result=\"209\",name=\"CUDA_ERROR_NO_BINARY_FOR_GPU\"}") == 1);
  CHECK(value(after, "jitcache_load_failures_total{cu_result=\"other\",name=\"other\"}") == 1);
  CHECK(value(after, "jitcache_quarantines_total") == 2);
  CHECK(value(after, "jitcache_entries") == 2);
  CHECK(value(after, "jitcache_entries_quarantined") == 2);
  // The test's uid is the daemon's own: its PUTs go to the shared namespace.
  CHECK(value(after, "jitcache_namespace_entries{namespace=\"shared\"}") == 2);
  CHECK(value(after, "jitcache_namespace_stored_bytes{namespace=\"shared\"}") == value(after, "jitcache_stored_bytes"));
  CHECK(value(after, "jitcache_stored_bytes") > 0);
  CHECK(value(after, "jitcache_connections_total") >= 1);
  CHECK(value(after, "jitcache_request_errors_total{status=\"not_found\"}") == 2);

  // Latency: every LOOKUP was measured, the buckets are cumulative up to _count.
  CHECK(value(after, "jitcache_request_duration_seconds_count{op=\"LOOKUP\"}") == 5);
  CHECK(value(after, "jitcache_request_duration_seconds_bucket{op=\"LOOKUP\",le=\"+Inf\"}") == 5);
  CHECK(value(after, "jitcache_request_duration_seconds_bucket{op=\"LOOKUP\",le=\"5e-05\"}") <=
        value(after, "jitcache_request_duration_seconds_bucket{op=\"LOOKUP\",le=\"120\"}"));
  CHECK(value(after, "jitcache_request_duration_seconds_sum{op=\"LOOKUP\"}") > 0);
  CHECK(value(after, "jitcache_request_duration_seconds_count{op=\"PUT\"}") == 2);
  CHECK(value(after, "jitcache_request_duration_seconds_count{op=\"REPORT_FAILURE\"}") == 2);
  CHECK(value(after, "jitcache_request_duration_seconds_count{op=\"GC\"}") == 0);

  CHECK(daemon.stop() == 0);
}

TEST_CASE(
    "metrics: anything but GET /metrics is 404 or 405, a bad request is 400, and the endpoint stops with the daemon") {
  TempDir dir;
  DaemonProcess daemon(dir, with_metrics("127.0.0.1:0"));
  const std::uint16_t port = start_and_find_metrics_port(daemon);

  auto other = testing::http_get(port, "/");
  REQUIRE(other.has_value());
  CHECK(other->status == 404);
  auto query = testing::http_get(port, "/metrics?name[]=jitcache_entries");
  REQUIRE(query.has_value());
  CHECK(query->status == 200);
  auto post = testing::http_request(port, "POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n");
  REQUIRE(post.has_value());
  CHECK(post->status == 405);
  auto huge = testing::http_request(port, "GET /metrics HTTP/1.1\r\nHost: x\r\nX-Pad: " + std::string(20'000, 'a') +
                                              "\r\n\r\n");
  REQUIRE(huge.has_value());
  CHECK(huge->status == 400);
  auto garbage = testing::http_request(port, "\x16\x03\x01 this is not http\r\n\r\n");
  REQUIRE(garbage.has_value());
  CHECK(garbage->status == 400);

  CHECK(daemon.stop() == 0);
  CHECK_FALSE(testing::http_get(port, "/metrics").has_value());  // nothing listens any more
}

TEST_CASE("metrics: a port already in use fails the start and the error names the address") {
  TempDir first_dir;
  DaemonProcess first(first_dir, with_metrics("127.0.0.1:0"));
  const std::uint16_t port = start_and_find_metrics_port(first);

  TempDir second_dir;
  DaemonProcess second(second_dir);
  const std::string taken = "127.0.0.1:" + std::to_string(port);
  auto result = second.run_to_exit({"--foreground", "--socket", second.socket_path(), "--state-dir", second.state_dir(),
                                    "--metrics-listen", taken},
                                   std::chrono::seconds(20));
  CHECK(result.status == 1);
  CHECK_THAT(result.output, Catch::Contains("cannot bind " + taken + " for metrics"));
  CHECK(first.stop() == 0);
}

TEST_CASE("metrics: silent and trickling connections do not keep a scrape out, and are closed after a short deadline") {
  TempDir dir;
  DaemonProcess daemon(dir, with_metrics("127.0.0.1:0"));
  const std::uint16_t port = start_and_find_metrics_port(daemon);

  // What any local user can do for free: connect and say nothing, or send a request line and stop.
  std::vector<int> idle;
  for (int i = 0; i < 8; ++i) {
    idle.push_back(testing::connect_loopback(port));
    REQUIRE(idle.back() >= 0);
  }
  const int trickle = testing::connect_loopback(port);
  REQUIRE(trickle >= 0);
  const auto trickle_opened = std::chrono::steady_clock::now();
  const std::string partial = "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n";
  REQUIRE(::send(trickle, partial.data(), partial.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(partial.size()));

  auto first = testing::http_get(port, "/metrics");  // gives up after 5 s
  REQUIRE(first.has_value());
  CHECK(first->status == 200);

  // The daemon closes the trickling connection (recv sees the end or a reset) once its 2 s for the
  // request are over; the bound leaves room for a busy machine.
  timeval wait{10, 0};
  ::setsockopt(trickle, SOL_SOCKET, SO_RCVTIMEO, &wait, sizeof wait);
  char byte = 0;
  const ssize_t got = ::recv(trickle, &byte, 1, 0);
  const auto open_for = std::chrono::steady_clock::now() - trickle_opened;
  CHECK(got <= 0);
  CHECK(open_for < std::chrono::seconds(4));
  ::close(trickle);

  // More silent connections than the endpoint serves at once: each newcomer closes the oldest one
  // still waiting for its request, so a scrape still gets in.
  for (int i = 0; i < 40; ++i) {
    idle.push_back(testing::connect_loopback(port));
    REQUIRE(idle.back() >= 0);
  }
  auto second = testing::http_get(port, "/metrics");
  REQUIRE(second.has_value());
  CHECK(second->status == 200);
  for (int fd : idle) ::close(fd);
  CHECK(daemon.stop() == 0);
}

TEST_CASE("metrics: a unix: address serves the metrics on a Unix socket of mode 0660 with the main socket's group") {
  testing::SystemUsers users("jcm");
  TempDir dir("jitcache-metrics-unix");
  ::chmod(dir.path().c_str(), 0755);  // users may reach the sockets below it
  const std::string metrics_socket = dir.path() + "/metrics/metrics.sock";
  DaemonOptions options = with_metrics("unix:" + metrics_socket);
  if (users.available()) {
    options.extra_args.push_back("--socket-group");
    options.extra_args.push_back(users.group_name());
  }
  DaemonProcess daemon(dir, options);
  daemon.start();
  CHECK_THAT(read_file(daemon.log_path()), Catch::Contains("metrics on unix:" + metrics_socket));

  struct stat st {};
  REQUIRE(::stat(metrics_socket.c_str(), &st) == 0);
  CHECK(S_ISSOCK(st.st_mode));
  CHECK((st.st_mode & 07777) == 0660);
  auto reply = testing::http_get_unix(metrics_socket, "/metrics");
  REQUIRE(reply.has_value());
  CHECK(reply->status == 200);
  CHECK(reply->headers.find("content-type: text/plain; version=0.0.4") != std::string::npos);
  CHECK(sample(reply->body, "jitcache_requests_total").has_value());

  if (!users.available()) {
    JITCACHE_MARK_SKIPPED("the group checks: " << users.why());
  } else {
    struct stat main_socket {};
    REQUIRE(::stat(daemon.socket_path().c_str(), &main_socket) == 0);
    CHECK(st.st_gid == users.group());
    CHECK(st.st_gid == main_socket.st_gid);
    const auto scrape_as = [&](const testing::SystemUser& user, const std::vector<gid_t>& groups) {
      return testing::as_user(user, groups, [&] {
        auto got = testing::http_get_unix(metrics_socket, "/metrics");
        return got && got->status == 200 ? 0 : 1;
      });
    };
    CHECK(scrape_as(users.a(), {users.group()}) == 0);  // a member of the socket's group
    CHECK(scrape_as(users.b(), {}) != 0);               // a user outside it
  }
  CHECK(daemon.stop() == 0);
}

TEST_CASE("metrics: bytes and entries by namespace name uids only with metrics_per_uid") {
  testing::SystemUsers users("jcp");
  if (!users.available()) {
    JITCACHE_SKIP(users.why());
  }
  const std::string uid = std::to_string(users.a().uid);
  for (const bool per_uid : {false, true}) {
    INFO("metrics_per_uid " << per_uid);
    TempDir dir("jitcache-metrics-uid");
    ::chmod(dir.path().c_str(), 0755);
    DaemonOptions options = with_metrics("127.0.0.1:0");
    options.extra_args.insert(options.extra_args.end(), {"--socket-group", users.group_name()});
    if (per_uid) options.extra_args.push_back("--metrics-per-uid");
    DaemonProcess daemon(dir, options);
    const std::uint16_t port = start_and_find_metrics_port(daemon);
    // An untrusted uid's PUT lands in its own namespace.
    const int put = testing::as_user(users.a(), {users.group()}, [&] {
      auto client = client::transport::DaemonClient::connect(daemon.connect_options());
      if (!client) return 1;
      const auto image = testing::sample_image(7, 3000);
      auto stored = client->put(testing::sample_put(7, image));
      return stored && stored->namespace_id != 0 ? 0 : 2;
    });
    REQUIRE(put == 0);

    const std::string own = "jitcache_namespace_entries{namespace=\"" + uid + "\"}";
    const std::string summed = "jitcache_namespace_entries{namespace=\"users\"}";
    const std::string& expected = per_uid ? own : summed;
    std::string body;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    do {
      body = scrape(port);
      if (sample(body, expected) == 1.0) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    } while (std::chrono::steady_clock::now() < deadline);
    CHECK(value(body, expected) == 1);
    CHECK(value(body, "jitcache_namespace_entries{namespace=\"shared\"}") == 0);
    if (per_uid) {
      CHECK(value(body, "jitcache_namespace_entries{namespace=\"other\"}") == 0);
      CHECK_FALSE(sample(body, summed).has_value());
    } else {
      CHECK(value(body, "jitcache_namespace_stored_bytes{namespace=\"users\"}") > 0);
      CHECK(body.find("namespace=\"" + uid + "\"") == std::string::npos);
    }
    CHECK(daemon.stop() == 0);
  }
}
