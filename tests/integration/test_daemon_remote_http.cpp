// The fleet tier on a real HTTP cache server (Debian's nginx with WebDAV): host B is served what
// host A uploaded, from https too (the server's certificate checked against remote_ca_file), with
// basic authentication from remote_password_file; nginx honours no conditional PUT, so there is no
// fleet lease there and each host compiles for itself (docs/operations.md "A fleet"), which the
// counters show.
#include <catch2/catch.hpp>

#include <sys/stat.h>

#include <fstream>
#include <thread>

#include <proto/compile_messages.hpp>
#include <proto/jit_options.hpp>
#include <tests/support/fleet_hosts.hpp>
#include <tests/support/nginx_server.hpp>
#include <tests/support/sample_entries.hpp>

using namespace jitcache;
using namespace jitcache::testing;
using namespace std::chrono_literals;

namespace {

bool uploaded(FleetHost& host, std::uint64_t count) {
  const auto until = std::chrono::steady_clock::now() + 20s;
  while (host_stat(host, "remote0.uploads") < count && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(20ms);
  }
  return host_stat(host, "remote0.uploads") >= count;
}

// A remote_password_file holding `line`, readable by its owner only.
std::string password_file(const TempDir& dir, const std::string& line) {
  const std::string path = dir.file("password");
  std::ofstream(path) << line << "\n";
  ::chmod(path.c_str(), 0600);
  return path;
}

void check_served(FleetHost& a, FleetHost& b) {
  const auto image = sample_image(3, 8192);
  {
    auto client = a.daemon->client();
    REQUIRE(client.put(sample_put(3, image)).ok());
  }
  REQUIRE(uploaded(a, 1));
  auto client = b.daemon->client();
  auto found = client.lookup(sample_key(3));
  REQUIRE(found.ok());
  REQUIRE(found->has_value());
  CHECK(host_stat(b, "remote0.hits") == 1);
}

}  // namespace

TEST_CASE("fleet over HTTP: another host is served what a builder uploaded to nginx") {
  NginxServer nginx;
  FleetKeys keys;
  FleetHost a = start_fleet_host(nginx.url(), keys, true);
  FleetHost b = start_fleet_host(nginx.url(), keys, false);
  check_served(a, b);
}

TEST_CASE("fleet over HTTP: https with the server's CA and basic authentication from the password file") {
  NginxOptions options;
  options.tls = true;
  options.user = "builder";
  options.password = "s3cret";
  NginxServer nginx(options);
  FleetKeys keys;
  TempDir secrets("jitcache-secrets");
  const std::vector<std::string> extra{"--remote-password-file", password_file(secrets, "builder:s3cret"),
                                       "--remote-ca-file", nginx.ca_file()};
  FleetHost a = start_fleet_host(nginx.url(), keys, true, extra);
  FleetHost b = start_fleet_host(nginx.url(), keys, false, extra);
  check_served(a, b);
}

TEST_CASE("fleet over HTTP: a wrong password is counted as forbidden and loads go on") {
  NginxOptions options;
  options.user = "builder";
  options.password = "right";
  NginxServer nginx(options);
  FleetKeys keys;
  TempDir secrets("jitcache-secrets");
  FleetHost b =
      start_fleet_host(nginx.url(), keys, false, {"--remote-password-file", password_file(secrets, "builder:wrong")});
  auto client = b.daemon->client();
  auto found = client.lookup(sample_key(5));
  REQUIRE(found.ok());
  CHECK_FALSE(found->has_value());
  CHECK(host_stat(b, "remote0.errors.forbidden") >= 1);
}

TEST_CASE("fleet over HTTP: nginx has no conditional PUT, so no lease is taken and each host compiles") {
  NginxServer nginx;
  FleetKeys keys;
  FleetHost a = start_fleet_host(nginx.url(), keys, true);
  const std::string ptx = read_file(std::string(JITCACHE_TEST_DATA_DIR) + "/small_kernel.ptx");
  const proto::CompileRequest request = fleet_compile_request(ptx);
  auto client = a.daemon->client();
  auto answer = client.compile(request, 120s);
  REQUIRE(answer.ok());
  CHECK(answer->kind == client::transport::CompileAnswer::Kind::compiled);
  CHECK(host_stat(a, "remote0.leases_won") == 0);
  CHECK(host_stat(a, "remote0.errors.unsupported") >= 1);
  CHECK(uploaded(a, 1));
}
