// Who may write to the fleet's remote and whose entries are served, with real jitcached daemons
// and a real redis-server on loopback (issue: a kernel compiles once per fleet; docs/operations.md
// "A fleet"):
//   - an untrusted uid's PUT stays in its own namespace on its host and is never uploaded, while a
//     trusted PUT to the shared namespace is (needs root to make the uid; skips visibly without);
//   - a signing key file others may read (0644) stops jitcached at start, naming the file and the fix;
//   - key rotation: a consumer trusting two public keys is served entries signed by either builder,
//     one trusting the old key alone refuses the new one's (unknown_signer);
//   - a full upload queue (remote_upload_queue 1, the remote paused) drops uploads and counts them
//     (remote0.upload_drops), and what was not dropped goes up once the remote answers;
//   - the Redis ACL lines of docs/operations.md "Redis and its ACLs", run verbatim: a consumer with
//     the read-only user is served, a builder with the writer user uploads, and a builder given the
//     read-only user cannot write (its upload fails, counted as upload_failures and errors.forbidden).
#include <catch2/catch.hpp>

#include <sys/stat.h>

#include <algorithm>
#include <functional>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <proto/digest.hpp>
#include <proto/key.hpp>
#include <tests/support/daemon_process.hpp>
#include <tests/support/documented_acl.hpp>
#include <tests/support/eventually.hpp>
#include <tests/support/fleet_hosts.hpp>
#include <tests/support/redis_server.hpp>
#include <tests/support/sample_entries.hpp>
#include <tests/support/system_users.hpp>
#include <tests/support/temp_dir.hpp>
#include <tests/support/test_skip.hpp>

using namespace jitcache;
using namespace jitcache::testing;
using namespace std::chrono_literals;

namespace {

// A daemon started with exactly `args` besides the socket, state dir and log level; `prepare` may
// change its directory first (e.g. open it to other uids).
FleetHost start_host(const std::vector<std::string>& args, const std::function<void(const TempDir&)>& prepare = {}) {
  FleetHost host;
  host.state = std::make_unique<TempDir>("jitcache-fleet-host");
  if (prepare) prepare(*host.state);
  DaemonOptions options;
  options.log_level = "info";
  options.extra_args = args;
  host.daemon = std::make_unique<DaemonProcess>(*host.state, options);
  host.daemon->start();
  return host;
}

std::string idx_id(std::uint64_t seed) { return proto::to_hex(proto::key_id(sample_key(seed))); }

// Whether Redis holds the tier's value `space`/`id` (docs/remote-layout.md "Key names": the
// default prefix, the id as the hash tag), asked as its default user.
bool in_redis(const RedisServer& redis, const std::string& space, const std::string& id) {
  return redis.cli({"EXISTS", "jitcache:" + space + ":{" + id + "}"}).rfind("1", 0) == 0;
}

// A PUT of sample entry `seed` to the shared namespace (this test's uid is the daemon's: trusted).
void put_shared(FleetHost& host, std::uint64_t seed) {
  const auto image = sample_image(seed, 4096);
  auto client = host.daemon->client();
  auto put = client.put(sample_put(seed, image));
  INFO((put ? std::string() : put.error().message));
  REQUIRE(put.ok());
  REQUIRE(put->namespace_id == 0);
}

// A LOOKUP of sample entry `seed`: whether it was served, and with the bytes that were PUT.
bool served(FleetHost& host, std::uint64_t seed) {
  auto client = host.daemon->client();
  auto found = client.lookup(sample_key(seed));
  REQUIRE(found.ok());
  if (!found->has_value()) return false;
  const auto image = sample_image(seed, 4096);
  const proto::Bytes bytes = (*found)->bytes();
  CHECK((bytes.size() == image.size() && std::equal(bytes.begin(), bytes.end(), image.begin())));
  return true;
}

}  // namespace

TEST_CASE("fleet uploads: an untrusted uid's PUT is kept in its own namespace and never uploaded, a trusted PUT is") {
  SystemUsers users;
  if (!users.available()) {
    JITCACHE_SKIP(users.why());
  }
  RedisServer redis;
  FleetKeys keys;
  // The daemon as root (the test's uid), its socket in a directory the users can reach, given to
  // their group.
  FleetHost builder = start_host({"--remote", redis.url() + "/0", "--remote-trusted-keys", keys.public_path,
                                  "--remote-signing-key", keys.private_path, "--socket-group", users.group_name()},
                                 [](const TempDir& dir) { ::chmod(dir.path().c_str(), 0755); });
  const DaemonProcess& daemon = *builder.daemon;
  const uid_t a_uid = users.a().uid;
  const int a_put = as_user(users.a(), {users.group()}, [&daemon, a_uid] {
    auto client = client::transport::DaemonClient::connect(daemon.connect_options());
    if (!client) return 2;
    const auto image = sample_image(1, 4096);
    auto put = client->put(sample_put(1, image));
    return put && put->namespace_id == a_uid ? 0 : 1;
  });
  REQUIRE(a_put == 0);  // stored, in A's own namespace
  put_shared(builder, 2);

  // Uploads go in order through one queue: once the trusted entry (PUT after A's) is up, A's would be too.
  REQUIRE(eventually([&] { return in_redis(redis, "idx", idx_id(2)) && host_stat(builder, "remote0.uploads") >= 1; }));
  CHECK_FALSE(in_redis(redis, "idx", idx_id(1)));
  CHECK(host_stat(builder, "remote0.uploads") == 1);
  CHECK(host_stat(builder, "remote0.upload_drops") == 0);
  CHECK(host_stat(builder, "remote0.upload_failures") == 0);
}

TEST_CASE(
    "fleet keys: a signing key file others may read (0644) stops jitcached at start, naming the file and the fix") {
  RedisServer redis;
  FleetKeys keys;
  REQUIRE(::chmod(keys.private_path.c_str(), 0644) == 0);
  TempDir dir("jitcache-fleet-host");
  DaemonProcess daemon(dir);
  const auto run = daemon.run_to_exit({"--foreground", "--socket", dir.file("s.sock"), "--state-dir", dir.file("store"),
                                       "--remote", redis.url() + "/0", "--remote-trusted-keys", keys.public_path,
                                       "--remote-signing-key", keys.private_path},
                                      20s);
  INFO(run.output);
  CHECK(run.status == 1);
  CHECK_THAT(run.output, Catch::Contains("remote_signing_key") && Catch::Contains(keys.private_path) &&
                             Catch::Contains("0644") && Catch::Contains("chmod 600 " + keys.private_path));

  // The mode was the reason: the same key at 0600 starts a builder.
  REQUIRE(::chmod(keys.private_path.c_str(), 0600) == 0);
  FleetHost builder = start_fleet_host(redis.url() + "/0", keys, /*builder=*/true);
  CHECK(builder.daemon->running());
}

TEST_CASE(
    "fleet keys: rotation: a consumer trusting two public keys is served what either builder signed, one trusting the "
    "old key alone refuses the new one's") {
  RedisServer redis;
  const std::string url = redis.url() + "/0";
  FleetKeys old_keys("old");
  FleetKeys new_keys("new");
  FleetHost old_builder = start_fleet_host(url, old_keys, /*builder=*/true);
  FleetHost new_builder = start_fleet_host(url, new_keys, /*builder=*/true);
  put_shared(old_builder, 1);
  put_shared(new_builder, 2);
  REQUIRE(eventually([&] { return host_stat(old_builder, "remote0.uploads") == 1; }));
  REQUIRE(eventually([&] { return host_stat(new_builder, "remote0.uploads") == 1; }));

  // Mid-rotation: both public keys, comma-separated, as remote_trusted_keys takes them.
  FleetHost both =
      start_host({"--remote", url, "--remote-trusted-keys", old_keys.public_path + "," + new_keys.public_path});
  CHECK(served(both, 1));
  CHECK(served(both, 2));
  CHECK(host_stat(both, "remote0.hits") == 2);
  CHECK(host_stat(both, "remote0.rejected.unknown_signer") == 0);
  CHECK(host_stat(both, "compiles") == 0);

  // Before the rotation: the new key's entries are not served, and said why.
  FleetHost old_only = start_fleet_host(url, old_keys, /*builder=*/false);
  CHECK_FALSE(served(old_only, 2));
  CHECK(host_stat(old_only, "remote0.rejected.unknown_signer") == 1);
  CHECK(served(old_only, 1));
  CHECK(host_stat(old_only, "remote0.hits") == 1);
}

TEST_CASE(
    "fleet uploads: with the upload queue full (remote_upload_queue 1, Redis paused) further uploads are dropped and "
    "counted as upload_drops") {
  RedisServer redis;
  FleetKeys keys;
  FleetHost builder =
      start_fleet_host(redis.url() + "/0", keys, /*builder=*/true, {"--remote-upload-queue", "1"}, "info");
  // Paused, the server takes the first upload's request and never answers it (until resumed): the
  // upload thread is held by that entry, the queue's one place is taken by the next, and every
  // later one finds it full. The PUTs themselves are local and all succeed.
  redis.pause();
  constexpr std::uint64_t k_puts = 5;
  for (std::uint64_t seed = 1; seed <= k_puts; ++seed) put_shared(builder, seed);
  const std::uint64_t drops = host_stat(builder, "remote0.upload_drops");
  // Three dropped; four when the second PUT came before the upload thread had taken the first.
  CHECK(drops >= k_puts - 2);
  CHECK(drops <= k_puts - 1);
  CHECK(host_stat(builder, "remote_uploads_queued") <= 1);
  CHECK(host_stat(builder, "remote0.uploads") == 0);
  CHECK_THAT(read_file(builder.daemon->log_path()), Catch::Contains("upload queue full"));

  // Answering again, the server gets what was not dropped, and nothing more.
  redis.resume();
  CHECK(eventually([&] { return host_stat(builder, "remote0.uploads") == k_puts - drops; }));
  std::this_thread::sleep_for(200ms);
  CHECK(host_stat(builder, "remote0.uploads") == k_puts - drops);
  CHECK(host_stat(builder, "remote0.upload_drops") == drops);
  std::uint64_t up = 0;
  for (std::uint64_t seed = 1; seed <= k_puts; ++seed) up += in_redis(redis, "idx", idx_id(seed)) ? 1 : 0;
  CHECK(up == k_puts - drops);
}

TEST_CASE(
    "fleet ACLs: the ACL lines of docs/operations.md used verbatim: the read-only user is served, the writer uploads, "
    "and the read-only user cannot write") {
  RedisServer redis;
  const std::vector<std::string> consumer_acl = documented_line("ACL SETUSER jc-reader ");
  const std::vector<std::string> builder_acl = documented_line("ACL SETUSER jc-builder ");
  INFO(redis.log_tail());
  REQUIRE(redis.cli(consumer_acl).rfind("OK", 0) == 0);
  REQUIRE(redis.cli(builder_acl).rfind("OK", 0) == 0);

  TempDir secrets("jitcache-fleet-passwords");
  const std::string consumer_password = password_file(secrets, "consumer", acl_password(consumer_acl));
  const std::string builder_password = password_file(secrets, "builder", acl_password(builder_acl));
  const std::string as_consumer = "redis://jc-reader@" + redis.address() + "/0";
  const std::string as_builder = "redis://jc-builder@" + redis.address() + "/0";
  FleetKeys keys;

  // The writer uploads.
  FleetHost builder =
      start_host({"--remote", as_builder, "--remote-password-file", builder_password, "--remote-trusted-keys",
                  keys.public_path, "--remote-signing-key", keys.private_path});
  put_shared(builder, 1);
  REQUIRE(eventually([&] { return host_stat(builder, "remote0.uploads") == 1; }));
  CHECK(host_stat(builder, "remote0.upload_failures") == 0);
  CHECK(host_stat(builder, "remote0.errors.forbidden") == 0);
  CHECK(in_redis(redis, "idx", idx_id(1)));

  // The read-only user is served it.
  FleetHost consumer = start_host({"--remote", as_consumer, "--remote-password-file", consumer_password,
                                   "--remote-trusted-keys", keys.public_path});
  // Eventually: on a loaded machine the first remote lookup may outlast remote_timeout (a miss).
  CHECK(eventually([&] { return served(consumer, 1); }));
  CHECK(host_stat(consumer, "remote0.hits") == 1);
  CHECK(host_stat(consumer, "remote0.errors.forbidden") == 0);

  // A builder given the read-only user cannot write: its upload fails, and is counted.
  FleetHost misconfigured =
      start_host({"--remote", as_consumer, "--remote-password-file", consumer_password, "--remote-trusted-keys",
                  keys.public_path, "--remote-signing-key", keys.private_path});
  put_shared(misconfigured, 2);
  REQUIRE(eventually([&] { return host_stat(misconfigured, "remote0.upload_failures") == 1; }));
  CHECK(host_stat(misconfigured, "remote0.uploads") == 0);
  CHECK(host_stat(misconfigured, "remote0.errors.forbidden") >= 1);
  CHECK_FALSE(in_redis(redis, "idx", idx_id(2)));
  CHECK_FALSE(in_redis(redis, "fk", proto::to_hex(proto::fast_key_id(sample_fast_key(2)))));
}
