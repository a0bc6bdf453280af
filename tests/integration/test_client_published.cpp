// Published images end to end: the real daemon publishes shared entries beside its socket, and
// libjitcache (with the fake driver, tests/fakes) loads hits from those files without a round trip,
// notes them with HIT_NOTE, refuses files it may not trust, and falls back to the socket.
#include <catch2/catch.hpp>

#include <jitcache/jitcache.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include <proto/published_image.hpp>

#include <client/src/loader/pending_hit_notes.hpp>
#include <tests/support/eventually.hpp>
#include <tests/support/load_flow_fixture.hpp>
#include <tests/support/sample_entries.hpp>
#include <tests/support/seccomp_refusal.hpp>
#include <tests/support/test_skip.hpp>

using namespace jitcache;
using namespace jitcache::testing::load_flow;
using jitcache::testing::DaemonProcess;
namespace fs = std::filesystem;

namespace {

using jitcache::testing::eventually;

std::string published_dir(const LiveDaemon& live) { return proto::published_dir_for(live.daemon.socket_path()); }

// The published files, not counting a file the publisher is writing (its temporary name starts
// with '.' and is renamed into place when complete).
std::vector<std::string> published_files(const LiveDaemon& live) {
  std::vector<std::string> names;
  if (!fs::exists(published_dir(live))) return names;
  for (const auto& entry : fs::directory_iterator(published_dir(live))) {
    const std::string name = entry.path().filename();
    if (!name.starts_with(".")) names.push_back(name);
  }
  return names;
}

// The one published file, once the publisher has written it.
std::string the_published_file(const LiveDaemon& live) {
  REQUIRE(eventually([&] { return published_files(live).size() == 1; }));
  return published_dir(live) + "/" + published_files(live).front();
}

// Replaces a file's bytes in place: its owner and mode stay, as a tampering with the bytes would.
void overwrite(const std::string& path, const std::string& bytes) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_TRUNC);
  REQUIRE(fd >= 0);
  REQUIRE(::write(fd, bytes.data(), bytes.size()) == static_cast<ssize_t>(bytes.size()));
  ::close(fd);
}

// A daemon that compiles and publishes, with the small kernel compiled and published by it.
struct PublishedKernel {
  explicit PublishedKernel(std::function<void()> before_exec = {})
      : live{true, {"--usage-flush-interval", "100ms"}, true, std::move(before_exec)} {
    REQUIRE(load_expecting(small_ptx().c_str(), CUDA_SUCCESS) == JITCACHE_OUTCOME_COMPILED_BY_DAEMON);
    file = the_published_file(live);
    use_socket(live.daemon.socket_path());  // a fresh runtime: counters and connections reset
    fake().reset_counters();
  }
  // Hits reach the database every 100 ms, so LIST shows a noted hit soon.
  LiveDaemon live;
  std::string file;
};

std::uint64_t eventually_stat(DaemonProcess& daemon, const std::string& name, std::uint64_t expected) {
  std::uint64_t value = 0;
  eventually([&] { return (value = stat_value(daemon, name)) == expected; });
  return value;
}

// Runs `body` in a forked child and returns the child's exit code, which is what `body` returned
// (99 if it threw); the child leaves with _exit and never returns into the test framework.
int exit_code_in_child(const std::function<int()>& body) {
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    int code = 99;
    try {
      code = body();
    } catch (...) {
    }
    ::_exit(code);
  }
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  REQUIRE(WIFEXITED(status));
  return WEXITSTATUS(status);
}

}  // namespace

TEST_CASE(
    "published: a compiled entry is published, and a fresh runtime's load is a hit from the file, noted by HIT_NOTE") {
  PublishedKernel k;
  struct stat st {};
  REQUIRE(::stat(k.file.c_str(), &st) == 0);
  CHECK((st.st_mode & 07777) == 0640);
  REQUIRE(::stat(published_dir(k.live).c_str(), &st) == 0);
  CHECK((st.st_mode & 07777) == 0750);
  const std::string bytes = testing::read_file(k.file);
  auto decoded = proto::decode_published_image(proto::as_bytes(bytes));
  REQUIRE(decoded);
  CHECK(decoded->reply.info.key.arch == "sm_90a");
  CHECK(decoded->reply.info.namespace_id == 0);
  CHECK(fs::path(k.file).filename() == proto::published_file_name(proto::fast_key_id(decoded->fast_key)));
  CHECK(stat_value(k.live.daemon, "published_images") == 1);
  CHECK(stat_value(k.live.daemon, "published_bytes") == bytes.size());

  const std::uint64_t connections_before = stat_value(k.live.daemon, "connections_total");
  CHECK(load_expecting(small_ptx().c_str(), CUDA_SUCCESS) == JITCACHE_OUTCOME_HIT);
  // The hit opened no connection (the next is this query's own), and its note waits.
  CHECK(stat_value(k.live.daemon, "connections_total") == connections_before + 1);
  CHECK(stat_value(k.live.daemon, "published_hits") == 0);
  const auto info = last_info();
  CHECK_THAT(std::string(info.reason), Catch::Contains("published copy"));
  CHECK(info.ns_lookup > 0);
  CHECK(counters().published_hits == 1);
  CHECK(counters().hits == 1);
  CHECK(counters().published_rejects == 0);
  CHECK(fake().counters().cubin_loads_ok == 1);
  CHECK(fake().counters().link_compiles == 0);

  // Configuring the library again sends the notes of the link it replaces (as exit does).
  use_socket(k.live.daemon.socket_path());
  CHECK(eventually_stat(k.live.daemon, "published_hits", 1) == 1);
  CHECK(stat_value(k.live.daemon, "hits") == 1);
  CHECK(stat_value(k.live.daemon, "fast_key_hits") == 0);  // no LOOKUP was needed
  CHECK(stat_value(k.live.daemon, "compile_microseconds_saved") > 0);
  // The note's entry counts the hit too, as LIST shows.
  auto client = k.live.daemon.client();
  proto::ListRequest list;
  auto page = client.list(list);
  REQUIRE(page);
  REQUIRE(page->entries.size() == 1);
  CHECK(eventually([&] {
    auto now = client.list(list);
    return now && now->entries.size() == 1 && now->entries.front().hits == 1;
  }));
}

TEST_CASE(
    "published: with chown refused, as the shipped unit's system-call filter refuses it, entries are still published and hit") {
  if (!testing::can_refuse_chown()) {
    JITCACHE_SKIP("no chown system-call numbers known for this architecture");
  }
  // The filter is real: a child under it cannot chown even its own file to its own group.
  testing::TempDir scratch;
  const std::string probe = scratch.file("probe");
  testing::write_file(probe, "");
  constexpr int k_filter_refused = 2;
  const int probed = exit_code_in_child([&] {
    if (!testing::refuse_chown()) return k_filter_refused;
    return ::chown(probe.c_str(), static_cast<uid_t>(-1), ::getegid()) != 0 && errno == EPERM ? 0 : 1;
  });
  if (probed == k_filter_refused) {
    JITCACHE_SKIP("the kernel refused to install a seccomp filter here");
  }
  REQUIRE(probed == 0);

  // The daemon under the same filter (as under jitcached.service) compiles and publishes, and a
  // fresh runtime loads the published copy.
  PublishedKernel k([] { testing::refuse_chown(); });
  CHECK(stat_value(k.live.daemon, "publish_failures") == 0);
  CHECK(load_expecting(small_ptx().c_str(), CUDA_SUCCESS) == JITCACHE_OUTCOME_HIT);
  CHECK_THAT(std::string(last_info().reason), Catch::Contains("published copy"));
  CHECK(counters().published_hits == 1);
}

TEST_CASE("published: a tampered file is refused and counted, and the load still hits through the socket") {
  PublishedKernel k;
  const std::string original = testing::read_file(k.file);
  auto decoded = proto::decode_published_image(proto::as_bytes(original));
  REQUIRE(decoded);
  std::string tampered = original;

  SECTION("a flipped image byte") { tampered[tampered.size() - 100] ^= 0x01; }
  SECTION("a truncated file") { tampered.resize(tampered.size() / 2); }
  SECTION("the file of another fast key") {
    proto::FastKey other = decoded->fast_key;
    other.content_fast.bytes[0] ^= 0xFF;
    const proto::Payload bytes = proto::encode_published_image(other, decoded->reply.info, decoded->reply.image);
    tampered.assign(bytes.begin(), bytes.end());
  }
  SECTION("an entry whose content digest is not the PTX's, with a consistent checksum") {
    proto::EntryInfo info = decoded->reply.info;
    info.key.content.bytes[0] ^= 0xFF;
    const proto::Payload bytes = proto::encode_published_image(decoded->fast_key, info, decoded->reply.image);
    tampered.assign(bytes.begin(), bytes.end());
  }
  SECTION("another format version") { tampered[4] = 9; }
  overwrite(k.file, tampered);

  CHECK(load_expecting(small_ptx().c_str(), CUDA_SUCCESS) == JITCACHE_OUTCOME_HIT);
  CHECK_THAT(std::string(last_info().reason), !Catch::Contains("published copy"));
  CHECK(counters().published_rejects == 1);
  CHECK(counters().published_hits == 0);
  CHECK(counters().hits == 1);
  CHECK(stat_value(k.live.daemon, "fast_key_hits") == 1);
  CHECK(stat_value(k.live.daemon, "published_hits") == 0);
}

TEST_CASE("published: a large image (mid_kernels, over 64 KiB) is published, read and hit with no connection") {
  LiveDaemon live{true, {}, true};
  const std::string mid = read_text(std::string(JITCACHE_TEST_DATA_DIR) + "/mid_kernels.ptx");
  REQUIRE(load_expecting(mid.c_str(), CUDA_SUCCESS) == JITCACHE_OUTCOME_COMPILED_BY_DAEMON);
  const std::string file = the_published_file(live);
  const std::string original = testing::read_file(file);
  REQUIRE(original.size() >= 64 * 1024);  // the reader once mapped files from this size on
  auto decoded = proto::decode_published_image(proto::as_bytes(original));
  REQUIRE(decoded);
  // The file's pad puts the image at a multiple of 64 bytes (published format 2).
  CHECK(static_cast<std::size_t>(decoded->reply.image.data() - proto::as_bytes(original).data()) %
            proto::k_published_image_alignment ==
        0);

  use_socket(live.daemon.socket_path());
  fake().reset_counters();
  const std::uint64_t connections_before = stat_value(live.daemon, "connections_total");
  CHECK(load_expecting(mid.c_str(), CUDA_SUCCESS) == JITCACHE_OUTCOME_HIT);
  CHECK_THAT(std::string(last_info().reason), Catch::Contains("published copy"));
  // No connection: neither the early one a large PTX used to open, nor a LOOKUP.
  CHECK(stat_value(live.daemon, "connections_total") == connections_before + 1);
  CHECK(counters().published_hits == 1);
  CHECK(fake().counters().cubin_loads_ok == 1);
  CHECK(fake().counters().link_compiles == 0);

  // A byte flipped in the published image is caught by its checksum, and the socket serves the hit.
  std::string tampered = original;
  tampered[tampered.size() - 100] ^= 0x01;
  overwrite(file, tampered);
  use_socket(live.daemon.socket_path());
  CHECK(load_expecting(mid.c_str(), CUDA_SUCCESS) == JITCACHE_OUTCOME_HIT);
  CHECK_THAT(std::string(last_info().reason), !Catch::Contains("published copy"));
  CHECK(counters().published_rejects == 1);
  CHECK(counters().published_hits == 0);
}

TEST_CASE("published: hit notes go out in batches of 64 on their own without a configure") {
  PublishedKernel k;
  for (std::size_t i = 0; i + 1 < client::loader::PendingHitNotes::k_batch; ++i) {
    REQUIRE(load_expecting(small_ptx().c_str(), CUDA_SUCCESS) == JITCACHE_OUTCOME_HIT);
  }
  CHECK(stat_value(k.live.daemon, "published_hits") == 0);  // 63 notes wait
  REQUIRE(load_expecting(small_ptx().c_str(), CUDA_SUCCESS) == JITCACHE_OUTCOME_HIT);
  CHECK(eventually_stat(k.live.daemon, "published_hits", 64) == 64);
  CHECK(counters().published_hits == 64);
}

TEST_CASE("published: a child process does not send the hit notes its parent had waiting") {
  PublishedKernel k;
  REQUIRE(load_expecting(small_ptx().c_str(), CUDA_SUCCESS) == JITCACHE_OUTCOME_HIT);
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) std::exit(0);  // exit(), not _exit(): static destructors run, as at a real exit
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  REQUIRE(WIFEXITED(status));
  CHECK(stat_value(k.live.daemon, "published_hits") == 0);
  use_socket(k.live.daemon.socket_path());  // the parent sends its note: exactly one
  CHECK(eventually_stat(k.live.daemon, "published_hits", 1) == 1);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  CHECK(stat_value(k.live.daemon, "published_hits") == 1);
}

TEST_CASE("published: a file or directory that others may write, or another uid owns, is ignored") {
  PublishedKernel k;
  SECTION("a group-writable file") { REQUIRE(::chmod(k.file.c_str(), 0660) == 0); }
  SECTION("a world-writable file") { REQUIRE(::chmod(k.file.c_str(), 0646) == 0); }
  SECTION("a group-writable directory") { REQUIRE(::chmod(published_dir(k.live).c_str(), 0770) == 0); }
  // The tests run as root, which may give the file away: what an attacker's own file would look like.
  SECTION("a file owned by another uid") { REQUIRE(::chown(k.file.c_str(), 12345, static_cast<gid_t>(-1)) == 0); }
  SECTION("a link in place of the file") {
    const std::string target = k.file + ".target";
    REQUIRE(::rename(k.file.c_str(), target.c_str()) == 0);
    REQUIRE(::symlink(target.c_str(), k.file.c_str()) == 0);
  }

  CHECK(load_expecting(small_ptx().c_str(), CUDA_SUCCESS) == JITCACHE_OUTCOME_HIT);
  CHECK(counters().published_rejects == 1);
  CHECK(counters().published_hits == 0);
  CHECK(stat_value(k.live.daemon, "fast_key_hits") == 1);
}

TEST_CASE(
    "published: a published copy that fails to load is reported and quarantined, and the rebuilt entry is published again") {
  PublishedKernel k;
  REQUIRE(fake().set_failure("load_cubin", CUDA_ERROR_INVALID_IMAGE, 1) == 0);
  CHECK(load_expecting(small_ptx().c_str(), CUDA_SUCCESS) == JITCACHE_OUTCOME_REBUILT_AFTER_FAILED_LOAD);
  CHECK(last_info().stage_result == CUDA_ERROR_INVALID_IMAGE);
  CHECK(counters().failure_reports == 1);
  CHECK(stat_value(k.live.daemon, "quarantines") == 1);
  // The rebuilt image was PUT (by root: shared) and replaced the quarantined entry; its file is
  // the new entry's, and the next load is a clean published hit.
  CHECK(eventually([&] { return stat_value(k.live.daemon, "published_images") == 1; }));
  use_socket(k.live.daemon.socket_path());
  CHECK(load_expecting(small_ptx().c_str(), CUDA_SUCCESS) == JITCACHE_OUTCOME_HIT);
  CHECK(counters().published_hits == 1);
}

TEST_CASE("published: REPORT_FAILURE and REMOVE remove the file before they are answered") {
  PublishedKernel k;
  auto client = k.live.daemon.client();
  const std::string bytes = testing::read_file(k.file);
  auto decoded = proto::decode_published_image(proto::as_bytes(bytes));
  REQUIRE(decoded);
  const proto::KeyFields key = decoded->reply.info.key;

  SECTION("REPORT_FAILURE") {
    proto::ReportFailureRequest report;
    report.key = key;
    report.cu_result = CUDA_ERROR_INVALID_IMAGE;
    report.stage = proto::FailureStage::load;
    REQUIRE(client.report_failure(report));
  }
  SECTION("REMOVE") { REQUIRE(client.remove(proto::to_hex(proto::key_id(key)))); }
  // Writes run on the daemon's writer thread, which removes the file before it answers.
  CHECK_FALSE(fs::exists(k.file));
  CHECK(stat_value(k.live.daemon, "published_images") == 0);
  CHECK(load_expecting(small_ptx().c_str(), CUDA_SUCCESS) != JITCACHE_OUTCOME_HIT);
  CHECK(counters().published_hits == 0);
}

TEST_CASE("published: eviction by max_size removes the evicted entries' files") {
  LiveDaemon live(false, {"--max-size", "1MiB"}, true);
  auto client = live.daemon.client();
  auto put = [&](std::uint64_t seed) {
    const std::vector<std::uint8_t> image = testing::sample_image(seed, 600'000);
    proto::PutRequest request = testing::sample_put(seed, image);
    request.content_fast = proto::xxh3_128(proto::as_bytes("source " + std::to_string(seed)));
    REQUIRE(client.put(request));
    return proto::published_file_name(proto::fast_key_id(proto::fast_key_of(request.key, *request.content_fast)));
  };
  const std::string first = put(1);
  REQUIRE(eventually([&] { return fs::exists(published_dir(live) + "/" + first); }));
  const std::string second = put(2);  // over 1 MiB: the first entry is evicted
  CHECK(stat_value(live.daemon, "evictions") == 1);
  CHECK_FALSE(fs::exists(published_dir(live) + "/" + first));
  CHECK(eventually([&] { return fs::exists(published_dir(live) + "/" + second); }));
}

TEST_CASE("published: past publish_size the least recently used file goes first") {
  LiveDaemon live(false, {"--publish-size", "10KiB"}, true);
  auto client = live.daemon.client();
  struct Put {
    proto::FastKey fast_key;
    std::string name;
  };
  auto put = [&](std::uint64_t seed) {
    const std::vector<std::uint8_t> image = testing::sample_image(seed, 4000);
    proto::PutRequest request = testing::sample_put(seed, image);
    request.content_fast = proto::xxh3_128(proto::as_bytes("source " + std::to_string(seed)));
    REQUIRE(client.put(request));
    const proto::FastKey fast_key = proto::fast_key_of(request.key, *request.content_fast);
    Put p{fast_key, published_dir(live) + "/" + proto::published_file_name(proto::fast_key_id(fast_key))};
    REQUIRE(eventually([&] { return fs::exists(p.name); }));
    return p;
  };
  const Put a = put(1);
  const Put b = put(2);
  // A hit of `a` (noted as a client would after loading its file) makes `b` the least recently used.
  auto noter = live.daemon.client();
  REQUIRE(noter.hit_note(a.fast_key));
  REQUIRE(eventually([&] { return stat_value(live.daemon, "published_hits") == 1; }));
  const Put c = put(3);
  CHECK(fs::exists(a.name));
  CHECK_FALSE(fs::exists(b.name));
  CHECK(fs::exists(c.name));
  CHECK(stat_value(live.daemon, "published_images") == 2);
  CHECK(stat_value(live.daemon, "published_bytes") <= 10 * 1024);
}

TEST_CASE("published: an untrusted uid's PUT lands in its own namespace and is never published") {
  LiveDaemon live(false, {}, true);
  // Let an unprivileged uid reach the socket (the tests run as root; the temp dir is 0700).
  REQUIRE(::chmod(live.dir.path().c_str(), 0755) == 0);
  REQUIRE(::chmod(live.daemon.socket_path().c_str(), 0666) == 0);
  const int put_as_nobody = exit_code_in_child([&] {
    if (::setgid(65534) != 0 || ::setuid(65534) != 0) return 10;
    auto connection = live.daemon.connect_options();
    auto client = client::transport::DaemonClient::connect(connection);
    if (!client) return 11;
    const std::vector<std::uint8_t> image = testing::sample_image(7, 4000);
    proto::PutRequest request = testing::sample_put(7, image);
    request.content_fast = proto::xxh3_128(proto::as_bytes("source 7"));
    auto reply = client->put(request);
    return !reply ? 12 : reply->namespace_id == 65534 ? 0 : 13;
  });
  REQUIRE(put_as_nobody == 0);
  CHECK(stat_value(live.daemon, "puts") == 1);
  // Give a publish that should not happen the time one would take.
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  CHECK(published_files(live).empty());
  CHECK(stat_value(live.daemon, "published_images") == 0);
}

TEST_CASE("published: a daemon restart wipes the directory") {
  PublishedKernel k;
  testing::write_file(published_dir(k.live) + "/" + std::string(64, 'b'), "left by someone");
  REQUIRE(k.live.daemon.stop() == 0);
  k.live.daemon.start();
  CHECK(published_files(k.live).empty());
  // The entry is published again when it is next served by fast key.
  use_socket(k.live.daemon.socket_path());
  CHECK(load_expecting(small_ptx().c_str(), CUDA_SUCCESS) == JITCACHE_OUTCOME_HIT);
  CHECK(counters().published_hits == 0);
  CHECK(eventually([&] { return published_files(k.live).size() == 1; }));
}

TEST_CASE("published: with the daemon dead, a valid published file is still a hit") {
  PublishedKernel k;
  k.live.daemon.kill_hard();
  use_socket(k.live.daemon.socket_path());
  CHECK(load_expecting(small_ptx().c_str(), CUDA_SUCCESS) == JITCACHE_OUTCOME_HIT);
  CHECK_THAT(std::string(last_info().reason), Catch::Contains("published copy"));
  CHECK(counters().published_hits == 1);
  CHECK(fake().counters().link_compiles == 0);
}

TEST_CASE("published: JITCACHE_PUBLISHED=0 takes the socket path") {
  PublishedKernel k;
  REQUIRE(::setenv("JITCACHE_PUBLISHED", "0", 1) == 0);
  use_socket(k.live.daemon.socket_path());
  const auto outcome = load_expecting(small_ptx().c_str(), CUDA_SUCCESS);
  ::unsetenv("JITCACHE_PUBLISHED");
  CHECK(outcome == JITCACHE_OUTCOME_HIT);
  CHECK(counters().published_hits == 0);
  CHECK(counters().published_rejects == 0);
  CHECK(stat_value(k.live.daemon, "fast_key_hits") == 1);
}
