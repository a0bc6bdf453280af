// Bundles end to end (docs/bundle-format.md, docs/operations.md "Container images"): the real CLI
// exports from one real daemon and imports into another, which then hits; a tampered, truncated or
// garbage bundle imports nothing and says why; an untrusted caller cannot put an unsigned bundle
// into the shared namespace; import_dir imports once at start; an import under PUT/LOOKUP traffic
// loses nothing.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include <common/unique_fd.hpp>
#include <daemon/bundle/bundle_reader.hpp>
#include <proto/bundle_messages.hpp>
#include <proto/content_digest.hpp>
#include <proto/key.hpp>
#include <proto/signing.hpp>
#include <tests/support/bundle_fixtures.hpp>
#include <tests/support/child_process.hpp>
#include <tests/support/daemon_process.hpp>
#include <tests/support/daemon_stats.hpp>
#include <tests/support/fleet_hosts.hpp>
#include <tests/support/sample_entries.hpp>
#include <tests/support/system_users.hpp>
#include <tests/support/temp_dir.hpp>
#include <tests/support/test_skip.hpp>

using namespace jitcache;
using testing::bundle_test_image;
using testing::daemon_with_args;
using testing::DaemonOptions;
using testing::DaemonProcess;
using testing::make_key_pair;
using testing::put_bundle_test_entries;
using testing::stat_value;
using testing::TempDir;

namespace {

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

testing::ChildResult cli(const DaemonProcess& daemon, const std::vector<std::string>& args) {
  return testing::run_cli(daemon, args, std::chrono::seconds(60));
}

bool hits(DaemonProcess& daemon, std::uint64_t seed) {
  auto client = daemon.client();
  auto found = client.lookup(testing::sample_key(seed));
  if (!found || !*found) return false;
  const auto image = bundle_test_image(seed);
  const auto bytes = (*found)->bytes();
  return std::equal(bytes.begin(), bytes.end(), image.begin(), image.end());
}

std::vector<std::uint8_t> read_bytes(const std::string& path) {
  const std::string text = testing::read_file(path);
  return {text.begin(), text.end()};
}

void write_bytes(const std::string& path, const std::vector<std::uint8_t>& bytes) {
  testing::write_file(path, std::string(bytes.begin(), bytes.end()));
}

// A builder that signs what it exports, and a fresh daemon that trusts its key.
struct Fleet {
  TempDir keys{"jitcache-bundle-keys"};
  std::string builder = make_key_pair(keys, "builder");
  TempDir exporter_dir{"jitcache-bundle-a"};
  TempDir importer_dir{"jitcache-bundle-b"};
  DaemonProcess exporter{exporter_dir, daemon_with_args({"--remote-signing-key", builder + ".key"})};
  DaemonProcess importer{importer_dir, daemon_with_args({"--remote-trusted-keys", builder + ".pub"})};
  std::string bundle = keys.file("entries.jcb");

  Fleet() {
    exporter.start();
    importer.start();
  }
};

}  // namespace

TEST_CASE(
    "bundles: exported from one daemon, imported into a fresh one, its entries hit, and a second import skips them all") {
  Fleet fleet;
  put_bundle_test_entries(fleet.exporter, 1, 3);

  const auto exported = cli(fleet.exporter, {"--json", "export", "-o", fleet.bundle});
  INFO(exported.output << exported.errors);
  REQUIRE(exported.status == 0);
  CHECK(contains(exported.output, "\"entries\": 3"));
  CHECK(contains(exported.output, "\"signed\": true"));
  auto exporter_client = fleet.exporter.client();
  CHECK(stat_value(exporter_client, "bundles_exported") == 1);
  CHECK(stat_value(exporter_client, "bundle_entries_exported") == 3);

  CHECK_FALSE(hits(fleet.importer, 1));
  const auto imported = cli(fleet.importer, {"--json", "import", fleet.bundle});
  INFO(imported.output << imported.errors);
  REQUIRE(imported.status == 0);
  CHECK(contains(imported.output, "\"imported\": 3"));
  CHECK(contains(imported.output, "\"skipped\": 0"));
  CHECK(contains(imported.output, "\"signer_trusted\": true"));
  CHECK(contains(imported.output, "\"namespace\": 0"));
  for (std::uint64_t seed = 1; seed <= 3; ++seed) CHECK(hits(fleet.importer, seed));
  // `jitcache get` by key id finds it too.
  const auto got = cli(fleet.importer, {"get", proto::to_hex(proto::key_id(testing::sample_key(2))), "-o",
                                        fleet.keys.file("got.cubin")});
  INFO(got.errors);
  CHECK(got.status == 0);

  const auto again = cli(fleet.importer, {"import", fleet.bundle});
  REQUIRE(again.status == 0);
  CHECK(contains(again.output, "imported 0 of 3 entries"));
  CHECK(contains(again.output, "3 skipped"));
  auto importer_client = fleet.importer.client();
  CHECK(stat_value(importer_client, "bundles_imported") == 2);
  CHECK(stat_value(importer_client, "bundle_entries_imported") == 3);
  CHECK(stat_value(importer_client, "bundle_entries_skipped") == 3);

  // The filters: another arch selects nothing, a key list only its keys.
  const auto none = cli(fleet.exporter, {"--json", "export", "--arch", "sm_80", "-o", fleet.keys.file("none.jcb")});
  REQUIRE(none.status == 0);
  CHECK(contains(none.output, "\"entries\": 0"));
  testing::write_file(fleet.keys.file("keys.txt"),
                      "# one key\n" + proto::to_hex(proto::key_id(testing::sample_key(3))) + "\n");
  const auto one = cli(fleet.exporter, {"--json", "export", "--keys", fleet.keys.file("keys.txt"), "--since", "1d",
                                        "-o", fleet.keys.file("one.jcb")});
  INFO(one.errors);
  REQUIRE(one.status == 0);
  CHECK(contains(one.output, "\"entries\": 1"));
}

TEST_CASE("bundles: a flipped byte in an image, a key field or the signature, a cut and garbage import nothing") {
  Fleet fleet;
  put_bundle_test_entries(fleet.exporter, 10, 3);
  REQUIRE(cli(fleet.exporter, {"export", "-o", fleet.bundle}).status == 0);
  const auto good = read_bytes(fleet.bundle);

  auto refused = [&](const std::vector<std::uint8_t>& bytes, const std::string& why) {
    const std::string path = fleet.keys.file("bad.jcb");
    write_bytes(path, bytes);
    const auto run = cli(fleet.importer, {"import", path});
    INFO(why << ": " << run.output << run.errors);
    CHECK(run.status == 4);
    CHECK(contains(run.errors, "nothing imported"));
    return run.errors;
  };

  // A byte of the second entry's image where the store kept it raw; the middle of the file (inside
  // the second of three entries of about the same size) where it compressed it.
  auto image = good;
  const auto raw = bundle_test_image(11);
  const std::vector<std::uint8_t> middle(raw.begin() + 1000, raw.begin() + 1016);
  const auto at = std::search(good.begin(), good.end(), middle.begin(), middle.end());
  image[at != good.end() ? static_cast<std::size_t>(at - good.begin()) : good.size() / 2] ^= 1;
  refused(image, "image byte");

  // The first entry's arch, sm_90 -> sm_91: still a valid key, so only the digest finds it out.
  auto key_field = good;
  const std::string arch = "sm_90";
  const auto arch_at = std::search(good.begin(), good.end(), arch.begin(), arch.end());
  REQUIRE(arch_at != good.end());
  key_field[static_cast<std::size_t>(arch_at - good.begin()) + 4] = '1';
  CHECK(contains(refused(key_field, "key field"), "digest"));

  auto signature = good;
  signature.back() ^= 1;
  CHECK(contains(refused(signature, "signature"), "signature"));

  for (const std::size_t cut : {std::size_t{5}, std::size_t{40}, good.size() / 2, good.size() - 100, good.size() - 1}) {
    const std::vector<std::uint8_t> bytes(good.begin(), good.begin() + static_cast<std::ptrdiff_t>(cut));
    CHECK(contains(refused(bytes, "cut at " + std::to_string(cut)), "bundle refused"));
  }
  CHECK(contains(refused(std::vector<std::uint8_t>(5000, 0x5a), "garbage"), "not a jitcache bundle"));

  auto client = fleet.importer.client();
  CHECK(stat_value(client, "entries") == 0);
  CHECK(stat_value(client, "bundles_imported") == 0);
  CHECK(stat_value(client, "bundles_refused") == 9);
  // The daemon is up and the good bundle still imports whole.
  REQUIRE(cli(fleet.importer, {"import", fleet.bundle}).status == 0);
  CHECK(stat_value(client, "entries") == 3);
}

TEST_CASE("bundles: a trusted caller imports an unsigned bundle into the shared namespace") {
  TempDir a_dir{"jitcache-bundle-a"};
  TempDir b_dir{"jitcache-bundle-b"};
  DaemonProcess exporter(a_dir);
  DaemonProcess importer(b_dir);
  exporter.start();
  importer.start();
  put_bundle_test_entries(exporter, 20, 2);
  const std::string bundle = a_dir.file("unsigned.jcb");
  const auto exported = cli(exporter, {"--json", "export", "-o", bundle});
  REQUIRE(exported.status == 0);
  CHECK(contains(exported.output, "\"signed\": false"));
  // This test runs as root or as the daemon's user: trusted.
  const auto imported = cli(importer, {"--json", "import", bundle});
  INFO(imported.errors);
  REQUIRE(imported.status == 0);
  CHECK(contains(imported.output, "\"namespace\": 0"));
  CHECK(hits(importer, 20));
}

TEST_CASE("bundles: an untrusted caller's unsigned or unknown-signed bundle is refused for shared, taken with --own") {
  testing::SystemUsers users;
  if (!users.available()) {
    JITCACHE_SKIP(users.why());
  }
  TempDir keys{"jitcache-bundle-keys"};
  ::chmod(keys.path().c_str(), 0755);
  const std::string trusted = make_key_pair(keys, "trusted");
  const std::string stranger = make_key_pair(keys, "stranger");
  TempDir a_dir{"jitcache-bundle-a"};
  TempDir s_dir{"jitcache-bundle-s"};
  TempDir b_dir{"jitcache-bundle-b"};
  ::chmod(b_dir.path().c_str(), 0755);
  DaemonProcess signed_by_trusted(a_dir, daemon_with_args({"--remote-signing-key", trusted + ".key"}));
  DaemonProcess signed_by_stranger(s_dir, daemon_with_args({"--remote-signing-key", stranger + ".key"}));
  DaemonProcess importer(b_dir, daemon_with_args(
                                    {"--socket-group", users.group_name(), "--remote-trusted-keys", trusted + ".pub"}));
  signed_by_trusted.start();
  signed_by_stranger.start();
  importer.start();
  put_bundle_test_entries(signed_by_trusted, 30, 2);
  put_bundle_test_entries(signed_by_stranger, 40, 2);
  REQUIRE(cli(signed_by_trusted, {"export", "-o", keys.file("trusted.jcb")}).status == 0);
  REQUIRE(cli(signed_by_stranger, {"export", "-o", keys.file("stranger.jcb")}).status == 0);
  ::chmod(keys.file("trusted.jcb").c_str(), 0644);
  ::chmod(keys.file("stranger.jcb").c_str(), 0644);

  // As A (untrusted), the file opened as A and passed to the daemon.
  auto import_as_a = [&](const std::string& file, proto::ImportTarget target, proto::Status expected,
                         std::uint32_t expected_namespace) {
    return testing::as_user(users.a(), {users.group()}, [&]() -> int {
      common::UniqueFd fd(::open(file.c_str(), O_RDONLY | O_CLOEXEC));
      if (!fd) return 10;
      auto client = importer.client();
      auto reply = client.import_bundle(proto::ImportBundleRequest{target}, fd.get(), std::chrono::seconds(30));
      if (expected != proto::Status::ok) {
        return !reply && reply.error().reply_status == static_cast<std::uint16_t>(expected) ? 0 : 11;
      }
      return reply && reply->namespace_id == expected_namespace ? 0 : 12;
    });
  };
  const std::uint32_t a_uid = users.a().uid;
  CHECK(import_as_a(keys.file("stranger.jcb"), proto::ImportTarget::shared, proto::Status::forbidden, 0) == 0);
  auto client = importer.client();
  CHECK(stat_value(client, "entries") == 0);
  CHECK(import_as_a(keys.file("stranger.jcb"), proto::ImportTarget::own, proto::Status::ok, a_uid) == 0);
  CHECK(import_as_a(keys.file("trusted.jcb"), proto::ImportTarget::shared, proto::Status::ok, 0) == 0);
  // The stranger's entries are A's alone; the trusted builder's are everyone's.
  CHECK_FALSE(hits(importer, 40));
  CHECK(hits(importer, 30));
  // An unsigned bundle (the importer has no signing key): refused for shared as well.
  REQUIRE(cli(importer, {"export", "-o", keys.file("unsigned.jcb")}).status == 0);
  ::chmod(keys.file("unsigned.jcb").c_str(), 0644);
  CHECK(import_as_a(keys.file("unsigned.jcb"), proto::ImportTarget::shared, proto::Status::forbidden, 0) == 0);
  CHECK(stat_value(client, "bundles_refused") == 2);
  CHECK(stat_value(client, "bundles_imported") == 2);
}

TEST_CASE("bundles: import_dir imports a trusted bundle once at start, skips bad ones, and not again on restart") {
  TempDir keys{"jitcache-bundle-keys"};
  const std::string builder = make_key_pair(keys, "builder");
  TempDir a_dir{"jitcache-bundle-a"};
  DaemonProcess exporter(a_dir, daemon_with_args({"--remote-signing-key", builder + ".key"}));
  exporter.start();
  put_bundle_test_entries(exporter, 50, 3);
  TempDir import_dir{"jitcache-bundle-import"};
  REQUIRE(cli(exporter, {"export", "-o", import_dir.file("kernels.jcb")}).status == 0);
  TempDir u_dir{"jitcache-bundle-u"};
  DaemonProcess unsigned_exporter(u_dir);
  unsigned_exporter.start();
  put_bundle_test_entries(unsigned_exporter, 60, 1);
  REQUIRE(cli(unsigned_exporter, {"export", "-o", import_dir.file("unsigned.jcb")}).status == 0);
  testing::write_file(import_dir.file("garbage.jcb"), std::string(2000, 'g'));
  testing::write_file(import_dir.file("notes.txt"), "not a bundle, not *.jcb");

  TempDir b_dir{"jitcache-bundle-b"};
  DaemonProcess importer(b_dir, daemon_with_args(
                                    {"--remote-trusted-keys", builder + ".pub", "--import-dir", import_dir.path()}));
  importer.start();
  for (std::uint64_t seed = 50; seed < 53; ++seed) CHECK(hits(importer, seed));
  CHECK_FALSE(hits(importer, 60));
  auto client = importer.client();
  CHECK(stat_value(client, "bundles_imported") == 1);
  CHECK(stat_value(client, "bundles_refused") == 2);
  const std::string log = testing::read_file(importer.log_path());
  CHECK(contains(log, "garbage.jcb skipped"));
  CHECK(contains(log, "unsigned.jcb skipped"));

  REQUIRE(importer.stop() == 0);
  importer.start();
  auto again = importer.client();
  CHECK(stat_value(again, "bundles_imported") == 0);
  CHECK(stat_value(again, "entries") == 3);
}

TEST_CASE("bundles: an import under concurrent PUT and LOOKUP traffic loses nothing and the daemon stays up") {
  Fleet fleet;
  put_bundle_test_entries(fleet.exporter, 100, 150);
  REQUIRE(cli(fleet.exporter, {"export", "-o", fleet.bundle}).status == 0);
  put_bundle_test_entries(fleet.importer, 1000, 5);

  std::atomic<bool> stop{false};
  std::atomic<int> failures{0};
  std::atomic<int> puts{0};
  std::vector<std::thread> traffic;
  for (int t = 0; t < 3; ++t) {
    traffic.emplace_back([&, t] {
      auto client = fleet.importer.client();
      for (std::uint64_t i = 0; !stop.load(); ++i) {
        const std::uint64_t seed = 2000 + static_cast<std::uint64_t>(t) * 100000 + i;
        const auto image = bundle_test_image(seed);
        if (!client.put(testing::sample_put(seed, image))) ++failures;
        ++puts;
        auto found = client.lookup(testing::sample_key(1000 + i % 5));
        if (!found || !*found) ++failures;
      }
    });
  }
  const auto imported = cli(fleet.importer, {"--json", "import", fleet.bundle});
  stop = true;
  for (auto& thread : traffic) thread.join();
  INFO(imported.errors);
  REQUIRE(imported.status == 0);
  CHECK(contains(imported.output, "\"imported\": 150"));
  CHECK(puts.load() > 0);
  CHECK(failures.load() == 0);
  auto client = fleet.importer.client();
  CHECK(stat_value(client, "entries") == static_cast<std::uint64_t>(155 + puts.load()));
  for (std::uint64_t seed = 100; seed < 250; seed += 37) CHECK(hits(fleet.importer, seed));
}

TEST_CASE("bundles: an entry the daemon compiled is exported with the PTX it kept, and hits after the import") {
  Fleet fleet;
  const std::string ptx = testing::read_file(std::string(JITCACHE_TEST_DATA_DIR) + "/small_kernel.ptx");
  const proto::CompileRequest request = testing::fleet_compile_request(ptx);
  {
    auto client = fleet.exporter.client();
    auto answer = client.compile(request, std::chrono::seconds(60));
    REQUIRE(answer);
    REQUIRE(answer->kind == client::transport::CompileAnswer::Kind::compiled);
    CHECK(stat_value(client, "sources") == 1);
  }
  const auto exported = cli(fleet.exporter, {"export", "-o", fleet.bundle});
  INFO(exported.output << exported.errors);
  REQUIRE(exported.status == 0);

  const std::vector<std::uint8_t> file = read_bytes(fleet.bundle);
  daemon::bundle::MemorySource source(file);
  auto reader = daemon::bundle::BundleReader::open(source, daemon::bundle::ReaderLimits{});
  REQUIRE(reader);
  auto read = reader->next();
  REQUIRE(read);
  REQUIRE(read->has_value());
  const daemon::bundle::BundleEntry& entry = (*read)->entry;
  CHECK(entry.key.content == proto::content_digest(proto::as_bytes(ptx)));
  CHECK(entry.source_raw_size == ptx.size());
  CHECK_FALSE(entry.source.empty());
  CHECK(entry.source.size() < ptx.size());

  const auto imported = cli(fleet.importer, {"import", fleet.bundle});
  INFO(imported.output << imported.errors);
  REQUIRE(imported.status == 0);
  auto importer_client = fleet.importer.client();
  auto found = importer_client.lookup(entry.key);
  REQUIRE(found);
  CHECK(found->has_value());
}
