// Multi-tenant trust against the real jitcached with real uids (docs/security.md): the
// test creates two unprivileged system users A and B in a group of their own, runs the daemon as
// root with that group on the socket, and runs clients as A and as B in forked children whose uids
// the kernel reports through SO_PEERCRED. Skips visibly where users cannot be created (not root).
#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <proto/digest.hpp>
#include <proto/key.hpp>

#include <tests/support/child_process.hpp>
#include <tests/support/daemon_process.hpp>
#include <tests/support/daemon_stats.hpp>
#include <tests/support/sample_entries.hpp>
#include <tests/support/system_users.hpp>
#include <tests/support/temp_dir.hpp>
#include <tests/support/test_skip.hpp>

using namespace jitcache;
using client::transport::DaemonClient;
using testing::DaemonOptions;
using testing::DaemonProcess;
using testing::stat_value;
using testing::SystemUser;
using testing::SystemUsers;
using testing::TempDir;

namespace {

constexpr std::uint32_t k_shared = 0;

std::string source_text(std::uint64_t seed) { return "source " + std::to_string(seed); }

proto::FastKey fast_key(std::uint64_t seed) {
  return proto::fast_key_of(testing::sample_key(seed), proto::xxh3_128(proto::as_bytes(source_text(seed))));
}

proto::PutRequest put_request(std::uint64_t seed, const std::vector<std::uint8_t>& image) {
  proto::PutRequest request = testing::sample_put(seed, image);
  request.content_fast = proto::xxh3_128(proto::as_bytes(source_text(seed)));
  return request;
}

proto::Digest256 key_id(std::uint64_t seed) { return proto::key_id(testing::sample_key(seed)); }

// The images each party stores: distinct bytes per (party, seed), so that any byte string a client
// is served says whose it is.
std::vector<std::uint8_t> shared_image(std::uint64_t seed) { return testing::sample_image(seed, 2000 + seed); }
std::vector<std::uint8_t> a_image(std::uint64_t seed) { return testing::sample_image(seed * 7 + 1, 3000 + seed); }
std::vector<std::uint8_t> b_image(std::uint64_t seed) { return testing::sample_image(seed * 13 + 5, 2500 + seed); }

const std::vector<std::uint64_t> k_shared_seeds{1, 2, 3, 4, 5, 6, 7, 8};
const std::vector<std::uint64_t> k_a_seeds{101, 102, 103, 104, 105, 106, 107, 108};

// What a child found wrong, written to its stderr (which ctest shows); the child's exit status is
// the number of failures, capped.
class Failures {
 public:
  explicit Failures(std::string who) : m_who(std::move(who)) {}
  void operator()(const std::string& what) {
    if (++m_count <= 20) std::fprintf(stderr, "%s: %s\n", m_who.c_str(), what.c_str());
  }
  int status() const { return m_count == 0 ? 0 : std::min(m_count, 100); }

 private:
  std::string m_who;
  int m_count = 0;
};

DaemonClient connect_as_child(const DaemonProcess& daemon) {
  auto client = DaemonClient::connect(daemon.connect_options());
  if (!client) throw std::runtime_error("cannot connect: " + client.error().message);
  return std::move(*client);
}

bool same_bytes(proto::Bytes bytes, const std::vector<std::uint8_t>& image) {
  return bytes.size() == image.size() && std::equal(bytes.begin(), bytes.end(), image.begin());
}

// The daemon as root, its socket in a directory A and B can reach, given to their group.
struct TenantDaemon {
  explicit TenantDaemon(const SystemUsers& users, std::vector<std::string> extra_args = {}) {
    ::chmod(dir.path().c_str(), 0755);
    DaemonOptions options;
    options.extra_args = {"--socket-group", users.group_name()};
    options.extra_args.insert(options.extra_args.end(), extra_args.begin(), extra_args.end());
    daemon.emplace(dir, options);
    daemon->start();
  }

  TempDir dir{"jitcache-tenants"};
  std::optional<DaemonProcess> daemon;
};

// A stores its entries (its own namespace), checking each reply names A's uid.
int put_a_entries(const DaemonProcess& daemon, uid_t a_uid) {
  Failures fail("A put");
  auto client = connect_as_child(daemon);
  for (auto seed : k_a_seeds) {
    const auto image = a_image(seed);
    auto put = client.put(put_request(seed, image));
    if (!put) fail("PUT " + std::to_string(seed) + ": " + put.error().message);
    else if (put->namespace_id != a_uid) fail("PUT landed in namespace " + std::to_string(put->namespace_id));
  }
  return fail.status();
}

// A checks every entry it should see, by key, by fast key and by key id prefix: its own with its
// bytes, the shared ones (`shared_seeds`) with theirs. `until` (a file): repeat until it exists.
int check_a_view(const DaemonProcess& daemon, uid_t a_uid,
                 const std::vector<std::uint64_t>& shared_seeds = k_shared_seeds, const std::string& until = {}) {
  Failures fail("A check");
  auto client = connect_as_child(daemon);
  auto expect = [&](std::optional<client::transport::FetchedImage> found, const std::vector<std::uint8_t>& image,
                    std::uint32_t ns, const std::string& what) {
    if (!found) fail(what + ": a miss");
    else if (!same_bytes(found->bytes(), image) || found->info.namespace_id != ns) fail(what + ": wrong bytes");
  };
  int rounds = 0;
  do {
    for (auto seed : k_a_seeds) {
      const std::string name = "A's entry " + std::to_string(seed);
      auto by_key = client.lookup(testing::sample_key(seed));
      if (!by_key) fail(name + " LOOKUP: " + by_key.error().message);
      else expect(std::move(*by_key), a_image(seed), a_uid, name + " by key");
      auto by_fast = client.lookup_fast(fast_key(seed));
      if (!by_fast) fail(name + " LOOKUP by fast key: " + by_fast.error().message);
      else expect(std::move(*by_fast), a_image(seed), a_uid, name + " by fast key");
      auto by_id = client.lookup_by_id(proto::to_hex(key_id(seed)).substr(0, 16));
      if (!by_id) fail(name + " LOOKUP by id: " + by_id.error().message);
      else expect(std::move(*by_id), a_image(seed), a_uid, name + " by id");
    }
    for (auto seed : shared_seeds) {
      auto found = client.lookup(testing::sample_key(seed));
      if (!found) fail("shared LOOKUP: " + found.error().message);
      else expect(std::move(*found), shared_image(seed), k_shared, "shared entry " + std::to_string(seed));
    }
    ++rounds;
  } while (!until.empty() && !std::filesystem::exists(until) && rounds < 100'000);
  return fail.status();
}

// B's 10 000 crafted attempts to reach A's entries or the shared ones.
int attack_as_b(const DaemonProcess& daemon, uid_t a_uid, uid_t b_uid) {
  Failures fail("B attack");
  std::vector<std::vector<std::uint8_t>> a_images;
  for (auto seed : k_a_seeds) a_images.push_back(a_image(seed));
  auto is_a_bytes = [&](proto::Bytes bytes) {
    for (const auto& image : a_images) {
      if (same_bytes(bytes, image)) return true;
    }
    return false;
  };
  std::optional<DaemonClient> client = connect_as_child(daemon);
  std::map<std::string, int> busy;
  for (int i = 0; i < 10'000; ++i) {
    if (!client) client = connect_as_child(daemon);
    const std::uint64_t a_seed = k_a_seeds[i % k_a_seeds.size()];
    const std::uint64_t shared_seed = k_shared_seeds[(i / 8) % k_shared_seeds.size()];
    std::optional<common::Error> transport_error;
    auto check_served = [&](auto& found, const std::string& what) {
      if (!found) {
        if (found.error().reply_status == 0) transport_error = found.error();
        return;
      }
      if (*found && is_a_bytes((**found).bytes())) fail(what + " served A's bytes");
      if (*found && (**found).info.namespace_id == a_uid) fail(what + " served A's namespace");
    };
    switch (i % 10) {
      case 0: {  // A's key fields (A's content digest) with B's bytes: must land in B's namespace
        const auto image = b_image(a_seed);
        auto put = client->put(put_request(a_seed, image));
        if (put && put->namespace_id != b_uid)
          fail("a forged PUT landed in namespace " + std::to_string(put->namespace_id));
        if (!put && put.error().reply_status == 0) transport_error = put.error();
        break;
      }
      case 1: {  // a shared key with B's bytes: never the shared namespace
        const auto image = b_image(shared_seed);
        auto put = client->put(put_request(shared_seed, image));
        if (put && put->namespace_id != b_uid)
          fail("a PUT over a shared key landed in namespace " + std::to_string(put->namespace_id));
        if (!put && put.error().reply_status == 0) transport_error = put.error();
        break;
      }
      case 2: {
        auto found = client->lookup(testing::sample_key(a_seed));
        check_served(found, "LOOKUP of A's key");
        break;
      }
      case 3: {
        auto found = client->lookup_fast(fast_key(a_seed));
        check_served(found, "LOOKUP of A's fast key");
        break;
      }
      case 4: {
        auto found = client->lookup_by_id(proto::to_hex(key_id(a_seed)).substr(0, 12));
        check_served(found, "LOOKUP of A's key id prefix");
        break;
      }
      case 5:
      case 6: {  // a flood of failure reports against shared entries and A's keys
        proto::ReportFailureRequest report;
        report.key = testing::sample_key(i % 20 == 5 ? a_seed : shared_seed);
        report.cu_result = 200;
        report.stage = proto::FailureStage::load;
        report.detail = "forged";
        auto reported = client->report_failure(report);
        if (reported && *reported && (*reported)->outcome == proto::ReportFailureOutcome::quarantined &&
            (*reported)->namespace_id != b_uid) {
          fail("B's report quarantined an entry of namespace " + std::to_string((*reported)->namespace_id));
        }
        if (!reported) {
          if (reported.error().reply_status == 0) transport_error = reported.error();
          else ++busy[reported.error().message.substr(0, 20)];
        }
        break;
      }
      case 7: {  // REMOVE by the prefix of A's key id: only B's own copy may go
        auto removed = client->remove(proto::to_hex(key_id(a_seed)).substr(0, 12));
        if (removed && removed->removed > 1) fail("REMOVE of A's prefix removed " + std::to_string(removed->removed));
        if (!removed && removed.error().reply_status == 0) transport_error = removed.error();
        break;
      }
      case 8: {
        proto::ListRequest request;
        request.limit = 1000;
        if (i % 20 == 8) {  // asking for A's namespace by number
          request.namespace_filter = true;
          request.namespace_id = a_uid;
        }
        auto listed = client->list(request);
        if (listed) {
          for (const auto& entry : listed->entries) {
            if (entry.namespace_id != b_uid && entry.namespace_id != k_shared)
              fail("LIST showed namespace " + std::to_string(entry.namespace_id));
          }
        } else if (listed.error().reply_status == 0) {
          transport_error = listed.error();
        }
        break;
      }
      case 9: {  // the trusted-only ops
        const bool gc = i % 20 == 9 ? client->gc().ok() : client->verify(std::chrono::seconds(10)).ok();
        if (gc) fail("an untrusted GC or VERIFY was served");
        break;
      }
    }
    if (transport_error) {
      fail("attempt " + std::to_string(i) + ": the connection failed: " + transport_error->message);
      client.reset();
    }
  }
  return fail.status();
}

}  // namespace

TEST_CASE("tenants: B's PUTs are invisible to A, and 10 000 crafted attempts by B never reach A's or shared entries") {
  SystemUsers users;
  if (!users.available()) {
    JITCACHE_SKIP(users.why());
  }
  TenantDaemon tenants(users, {"--report-quorum", "3", "--reports-per-minute", "30"});
  DaemonProcess& daemon = *tenants.daemon;
  auto root = daemon.client();
  for (auto seed : k_shared_seeds) {
    const auto image = shared_image(seed);
    auto put = root.put(put_request(seed, image));
    REQUIRE(put);
    REQUIRE(put->namespace_id == k_shared);
  }
  const uid_t a_uid = users.a().uid;
  const uid_t b_uid = users.b().uid;
  REQUIRE(testing::as_user(users.a(), {users.group()}, [&] { return put_a_entries(daemon, a_uid); }) == 0);
  REQUIRE(testing::as_user(users.a(), {users.group()}, [&] { return check_a_view(daemon, a_uid); }) == 0);

  // A keeps checking what it is served while B attacks, racing B's writes to the same keys.
  const std::string done = tenants.dir.file("attack-done");
  const pid_t a_checker = testing::start_as_user(users.a(), {users.group()},
                                                 [&] { return check_a_view(daemon, a_uid, k_shared_seeds, done); });
  const int attack = testing::as_user(users.b(), {users.group()}, [&] { return attack_as_b(daemon, a_uid, b_uid); });
  testing::write_file(done, "");
  CHECK(attack == 0);
  CHECK(testing::wait_child(a_checker) == 0);

  // Afterwards A still gets exactly its own and the shared bytes, and no shared entry is quarantined.
  CHECK(testing::as_user(users.a(), {users.group()}, [&] { return check_a_view(daemon, a_uid); }) == 0);
  proto::ListRequest everything;
  everything.limit = 1000;
  auto listed = root.list(everything);
  REQUIRE(listed);
  for (const auto& entry : listed->entries) {
    INFO("namespace " << entry.namespace_id);
    if (entry.namespace_id != b_uid) CHECK(entry.quarantined_at_ms == 0);
  }
  CHECK(stat_value(root, "reports_rate_limited") > 0);
  CHECK(stat_value(root, "reports_held") > 0);
  CHECK(stat_value(root, "errors.forbidden") >= 1000);
  CHECK(daemon.running());
}

TEST_CASE("tenants: a shared entry is hidden from each reporter at once and quarantined at report_quorum uids") {
  SystemUsers users;
  if (!users.available()) {
    JITCACHE_SKIP(users.why());
  }
  TenantDaemon tenants(users, {"--report-quorum", "2"});
  DaemonProcess& daemon = *tenants.daemon;
  auto root = daemon.client();
  const auto image = shared_image(1);
  REQUIRE(root.put(put_request(1, image)));

  auto report_then_lookup = [&](proto::ReportFailureOutcome expected, bool others_served) {
    return [&daemon, expected, others_served]() {
      Failures fail("reporter");
      auto client = connect_as_child(daemon);
      proto::ReportFailureRequest report;
      report.key = testing::sample_key(1);
      report.cu_result = 209;
      report.stage = proto::FailureStage::image;
      auto reported = client.report_failure(report);
      if (!reported || !*reported) fail("REPORT_FAILURE was not applied");
      else if ((*reported)->outcome != expected)
        fail("outcome " + std::to_string(static_cast<int>((*reported)->outcome)));
      auto found = client.lookup(testing::sample_key(1));
      if (!found || *found) fail("the reporter is still served the entry");
      (void)others_served;
      return fail.status();
    };
  };
  REQUIRE(testing::as_user(users.a(), {users.group()},
                           report_then_lookup(proto::ReportFailureOutcome::hidden_from_reporter, true)) == 0);
  // B and root are still served it.
  auto still = root.lookup(testing::sample_key(1));
  REQUIRE(still);
  CHECK(still->has_value());
  CHECK(testing::as_user(users.b(), {users.group()}, [&] {
          auto client = connect_as_child(daemon);
          auto found = client.lookup(testing::sample_key(1));
          return found && *found && same_bytes((*found)->bytes(), image) ? 0 : 1;
        }) == 0);
  CHECK(stat_value(root, "quarantines") == 0);

  REQUIRE(testing::as_user(users.b(), {users.group()},
                           report_then_lookup(proto::ReportFailureOutcome::quarantined, false)) == 0);
  auto gone = root.lookup(testing::sample_key(1));
  REQUIRE(gone);
  CHECK_FALSE(gone->has_value());
  CHECK(stat_value(root, "quarantines") == 1);
  CHECK(stat_value(root, "reports_held") == 1);
}

TEST_CASE("tenants: a uid's namespace quota holds by evicting its own entries, and a larger image is refused") {
  SystemUsers users;
  if (!users.available()) {
    JITCACHE_SKIP(users.why());
  }
  TenantDaemon tenants(users, {"--namespace-quota", "1MiB", "--compression-level", "0"});
  DaemonProcess& daemon = *tenants.daemon;
  auto root = daemon.client();
  REQUIRE(root.put(put_request(1, shared_image(1))));
  const uid_t a_uid = users.a().uid;
  const uid_t b_uid = users.b().uid;
  REQUIRE(testing::as_user(users.a(), {users.group()}, [&] { return put_a_entries(daemon, a_uid); }) == 0);

  const int b_run = testing::as_user(users.b(), {users.group()}, [&] {
    Failures fail("B quota");
    auto client = connect_as_child(daemon);
    for (std::uint64_t seed = 500; seed < 520; ++seed) {
      const auto image = testing::sample_image(seed, 200 * 1024);
      if (auto put = client.put(put_request(seed, image)); !put) fail("PUT within the quota: " + put.error().message);
    }
    const auto huge = testing::sample_image(999, (1 << 20) + 1);
    auto refused = client.put(put_request(999, huge));
    if (refused || refused.error().reply_status != static_cast<std::uint16_t>(proto::Status::too_large)) {
      fail("an image over the quota was not refused as too_large");
    }
    proto::ListRequest mine;
    mine.limit = 1000;
    auto listed = client.list(mine);
    std::uint64_t bytes = 0;
    if (listed) {
      for (const auto& entry : listed->entries) {
        if (entry.namespace_id == b_uid) bytes += entry.stored_size;
      }
    }
    if (bytes == 0 || bytes > (1u << 20)) fail("B's namespace holds " + std::to_string(bytes) + " bytes");
    return fail.status();
  });
  CHECK(b_run == 0);
  CHECK(testing::as_user(users.a(), {users.group()}, [&] { return check_a_view(daemon, a_uid, {1}); }) == 0);
  auto shared = root.lookup(testing::sample_key(1));
  REQUIRE(shared);
  CHECK(shared->has_value());
  CHECK(stat_value(root, "quota_evictions") > 0);
  CHECK(stat_value(root, "evictions") == 0);
}

TEST_CASE("tenants: connections per uid are limited and another uid still connects") {
  SystemUsers users;
  if (!users.available()) {
    JITCACHE_SKIP(users.why());
  }
  TenantDaemon tenants(users, {"--max-connections-per-uid", "4"});
  DaemonProcess& daemon = *tenants.daemon;
  // B tells the test it holds its connections through a file in a directory it may write to.
  TempDir signals("jitcache-tenants-signals");
  ::chmod(signals.path().c_str(), 0777);
  const std::string b_holding = signals.file("b-holding");
  const std::string release = signals.file("release");
  const pid_t b = testing::start_as_user(users.b(), {users.group()}, [&] {
    Failures fail("B connections");
    std::vector<DaemonClient> open;
    for (int i = 0; i < 4; ++i) {
      open.push_back(connect_as_child(daemon));
      if (!open.back().ping()) fail("connection " + std::to_string(i) + " within the limit was not served");
    }
    // One PING: a second on the refused connection would be sent again on a new one (the daemon
    // closed this one), and be refused, and counted, again.
    if (auto over = DaemonClient::connect(daemon.connect_options())) {
      auto pinged = over->ping();
      if (pinged) {
        fail("a fifth connection was served");
      } else if (pinged.error().reply_status != 0 &&
                 pinged.error().reply_status != static_cast<std::uint16_t>(proto::Status::busy)) {
        fail("the fifth connection got " + pinged.error().message);
      }
    }
    testing::write_file(b_holding, "");
    for (int i = 0; i < 500 && !std::filesystem::exists(release); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    for (auto& client : open) {
      if (!client.ping()) fail("a held connection stopped being served");
    }
    return fail.status();
  });
  for (int i = 0; i < 500 && !std::filesystem::exists(b_holding); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  REQUIRE(std::filesystem::exists(b_holding));
  CHECK(testing::as_user(users.a(), {users.group()}, [&] {
          auto client = connect_as_child(daemon);
          return client.ping() ? 0 : 1;
        }) == 0);
  testing::write_file(release, "");
  CHECK(testing::wait_child(b) == 0);
  auto root = daemon.client();
  CHECK(stat_value(root, "connections_refused_per_uid") == 1);
}

TEST_CASE("tenants: a trusted user's and a trusted group member's PUTs are shared, an untrusted one's are not") {
  SystemUsers users;
  if (!users.available()) {
    JITCACHE_SKIP(users.why());
  }
  auto put_as = [](const DaemonProcess& daemon, std::uint64_t seed) {
    return [&daemon, seed] {
      auto client = connect_as_child(daemon);
      const auto image = testing::sample_image(seed, 1000);
      auto put = client.put(put_request(seed, image));
      return put ? static_cast<int>(put->namespace_id == k_shared ? 0 : 1) : 2;
    };
  };
  {
    TenantDaemon tenants(users, {"--trusted-users", users.a().name});
    CHECK(testing::as_user(users.a(), {users.group()}, put_as(*tenants.daemon, 1)) == 0);
    CHECK(testing::as_user(users.b(), {users.group()}, put_as(*tenants.daemon, 2)) == 1);
  }
  {
    // B is trusted through a supplementary group it had when it connected; A is in the socket's
    // group only, so it is not.
    const gid_t a_group = users.a().gid;
    TenantDaemon tenants(users, {"--trusted-groups", std::to_string(a_group)});
    CHECK(testing::as_user(users.b(), {users.group(), a_group}, put_as(*tenants.daemon, 3)) == 0);
    CHECK(testing::as_user(users.b(), {users.group()}, put_as(*tenants.daemon, 4)) == 1);
  }
  {
    TempDir dir;
    DaemonProcess daemon(dir, DaemonOptions{{"--trusted-users", "no-such-user-jitcache"}, {}, "warn"});
    auto run = daemon.run_to_exit({"--foreground", "--socket", dir.file("s.sock"), "--state-dir", dir.file("store"),
                                   "--trusted-users", "no-such-user-jitcache"},
                                  std::chrono::seconds(20));
    CHECK(run.status != 0);
    CHECK_THAT(run.output, Catch::Contains("trusted_users") && Catch::Contains("unknown user"));
  }
}

TEST_CASE("tenants: the jitcache CLI run as B with setpriv lists only what B may see and removes none of A's") {
  SystemUsers users;
  if (const std::string why = testing::why_cannot_setpriv_as(users); !why.empty()) {
    JITCACHE_SKIP(why);
  }
  TenantDaemon tenants(users);
  DaemonProcess& daemon = *tenants.daemon;
  const uid_t a_uid = users.a().uid;
  REQUIRE(testing::as_user(users.a(), {users.group()}, [&] { return put_a_entries(daemon, a_uid); }) == 0);
  auto root = daemon.client();
  REQUIRE(root.put(put_request(1, shared_image(1))));

  // A copy B can run: the build tree may lie where other uids cannot reach (a checkout under /root).
  TempDir bin("jitcache-tenants-bin");
  ::chmod(bin.path().c_str(), 0755);
  const std::string cli_copy = bin.file("jitcache");
  // The full CLI (client/cli), not the front: a lone copy of the front would look for it beside itself.
  std::filesystem::copy_file(JITCACHE_FULL_CLI_PATH, cli_copy);
  ::chmod(cli_copy.c_str(), 0755);
  const std::vector<std::string> as_b{"--reuid",  std::to_string(users.b().uid),
                                      "--regid",  std::to_string(users.b().gid),
                                      "--groups", std::to_string(users.group())};
  auto cli = [&](std::vector<std::string> args) {
    std::vector<std::string> argv{"/usr/bin/setpriv"};
    argv.insert(argv.end(), as_b.begin(), as_b.end());
    argv.push_back(cli_copy);
    argv.push_back("--socket");
    argv.push_back(daemon.socket_path());
    argv.insert(argv.end(), args.begin(), args.end());
    return testing::run_child(argv, {}, std::chrono::seconds(30));
  };
  auto listed = cli({"--json", "ls"});
  INFO(listed.output);
  CHECK(listed.status == 0);
  CHECK_THAT(listed.output, Catch::Contains(proto::to_hex(key_id(1))));
  for (auto seed : k_a_seeds) CHECK_THAT(listed.output, !Catch::Contains(proto::to_hex(key_id(seed))));
  auto removed = cli({"rm", proto::to_hex(key_id(101)).substr(0, 16)});
  INFO(removed.output);
  CHECK(removed.status != 0);  // nothing of B's under that prefix: not found
  CHECK(testing::as_user(users.a(), {users.group()}, [&] {
          auto client = connect_as_child(daemon);
          auto found = client.lookup(testing::sample_key(101));
          return found && *found ? 0 : 1;
        }) == 0);
}
