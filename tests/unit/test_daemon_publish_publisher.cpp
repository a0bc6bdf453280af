// The publisher (daemon/publish/) against a real SqliteStore: which entries get a file, what the
// file holds, and that every way an entry stops being servable (REMOVE, quarantine, replacement,
// eviction) removes its file; the publish_size budget; a full file system; start-up wiping.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include <proto/published_image.hpp>

#include <daemon/publish/publish_policy.hpp>
#include <daemon/publish/published_dir.hpp>
#include <daemon/publish/published_file.hpp>
#include <daemon/publish/publisher.hpp>
#include <daemon/store/sqlite_store.hpp>
#include <tests/support/sample_entries.hpp>
#include <tests/support/store_dir.hpp>
#include <tests/support/temp_dir.hpp>
#include <tests/support/test_skip.hpp>
#include <tests/support/tmpfs_mount.hpp>

namespace {

using namespace jitcache;
using daemon::publish::Publisher;
using daemon::publish::PublishSettings;
using daemon::publish::PublishVerdict;
using daemon::store::PutInput;
using daemon::store::SqliteStore;
using daemon::store::Visibility;
namespace fs = std::filesystem;

using StoreTweak = std::function<void(daemon::store::SqliteStoreOptions&)>;

std::unique_ptr<SqliteStore> open_store(const testing::StoreDir& dir, const StoreTweak& tweak) {
  daemon::store::SqliteStoreOptions options;
  options.path = dir.db();
  options.reader_count = 2;
  if (tweak) tweak(options);
  auto store = SqliteStore::open(options);
  REQUIRE(store);
  return std::move(*store);
}

// An entry of the test: its key, fast key and image, and the row the store gave it.
struct Entry {
  explicit Entry(std::uint64_t seed, std::size_t size = 4000)
      : key(testing::sample_key(seed)),
        content_fast(proto::xxh3_128(proto::as_bytes("source " + std::to_string(seed)))),
        fast_key(proto::fast_key_of(key, content_fast)),
        fast_key_id(proto::fast_key_id(fast_key)),
        image(testing::sample_image(seed, size)) {}
  proto::KeyFields key;
  proto::Checksum128 content_fast;
  proto::FastKey fast_key;
  proto::Digest256 fast_key_id;
  std::vector<std::uint8_t> image;
  std::int64_t row_id = 0;
  std::string file_name() const { return proto::published_file_name(fast_key_id); }
};

// A store, a published directory beside a stand-in "socket", and the publisher over both.
struct Fixture {
  explicit Fixture(PublishSettings settings = {}, const StoreTweak& tweak = {}, std::string dir_override = {})
      : store(open_store(store_dir, tweak)) {
    testing::write_file(socket_path(), "");
    const std::string dir = dir_override.empty() ? published_dir() : dir_override;
    auto prepared = daemon::publish::prepare_published_dir(dir, socket_path());
    INFO((prepared ? std::string() : prepared.error().message));
    REQUIRE(prepared);
    publisher.emplace(std::move(*prepared), dir, *store, settings);
  }
  std::string socket_path() const { return temp.file("jitcached.sock"); }
  std::string published_dir() const { return proto::published_dir_for(socket_path()); }
  std::string path_of(const Entry& e) const { return publisher->dir_path() + "/" + e.file_name(); }
  bool published(const Entry& e) const { return fs::exists(path_of(e)); }

  void put(Entry& e, std::uint32_t namespace_id = 0) {
    PutInput input;
    input.key = e.key;
    input.namespace_id = namespace_id;
    input.producer = "test";
    input.compile_time_us = 77;
    input.image = proto::Bytes(e.image);
    input.content_fast = e.content_fast;
    auto outcome = store->put(input);
    REQUIRE(outcome);
    e.row_id = outcome->row_id;
    publisher->stored(e.row_id, namespace_id, e.fast_key, proto::Bytes(e.image));
    publisher->wait_idle();
  }

  testing::TempDir temp;
  testing::StoreDir store_dir;
  std::unique_ptr<SqliteStore> store;
  std::optional<Publisher> publisher;
};

}  // namespace

TEST_CASE("publish policy: only live shared entries with a fast key and an image within the limit") {
  proto::EntryInfo info;
  info.namespace_id = 0;
  info.raw_size = 1000;
  CHECK(daemon::publish::publish_verdict(info, true, 1000) == PublishVerdict::publish);
  CHECK(daemon::publish::publish_verdict(info, false, 1000) == PublishVerdict::no_fast_key);
  CHECK(daemon::publish::publish_verdict(info, true, 999) == PublishVerdict::too_large);
  info.quarantined_at_ms = 5;
  CHECK(daemon::publish::publish_verdict(info, true, 1000) == PublishVerdict::quarantined);
  info.quarantined_at_ms = 0;
  info.namespace_id = 1000;  // an untrusted uid's PUT
  CHECK(daemon::publish::publish_verdict(info, true, 1000) == PublishVerdict::not_shared);
}

TEST_CASE("publisher: a stored shared entry becomes a 0640 file holding its LOOKUP reply") {
  Fixture f;
  Entry e(1);
  f.put(e);
  REQUIRE(f.published(e));
  struct stat st {};
  REQUIRE(::stat(f.path_of(e).c_str(), &st) == 0);
  CHECK((st.st_mode & 07777) == 0640);
  struct stat dir_st {};
  REQUIRE(::stat(f.publisher->dir_path().c_str(), &dir_st) == 0);
  CHECK((dir_st.st_mode & 07777) == 0750);

  const std::string bytes = testing::read_file(f.path_of(e));
  auto decoded = proto::decode_published_image(proto::as_bytes(bytes));
  REQUIRE(decoded);
  CHECK(decoded->fast_key == e.fast_key);
  CHECK(decoded->reply.info.key == e.key);
  CHECK(decoded->reply.info.namespace_id == 0);
  CHECK(decoded->reply.info.compile_time_us == 77);
  CHECK(std::vector<std::uint8_t>(decoded->reply.image.begin(), decoded->reply.image.end()) == e.image);
  CHECK(f.publisher->stats().published_images == 1);
  CHECK(f.publisher->stats().published_bytes == bytes.size());
  // Nothing but the file: the temporary name is gone.
  CHECK(std::distance(fs::directory_iterator(f.publisher->dir_path()), fs::directory_iterator()) == 1);
}

TEST_CASE("publisher: an entry in a uid's own namespace is never published, however it is offered") {
  Fixture f;
  Entry e(2);
  f.put(e, 1000);
  CHECK_FALSE(f.published(e));
  // Served to its owner by fast key: still not published.
  auto found = f.store->lookup(daemon::store::Selector::fast_key_id(e.fast_key_id), Visibility{1000, false});
  REQUIRE(found);
  const auto* hit = std::get_if<daemon::store::Hit>(&*found);
  REQUIRE(hit != nullptr);
  f.publisher->served(*hit, e.fast_key, e.fast_key_id);
  // Offered as if shared: the store, asked before the file goes in, says the row is not.
  f.publisher->stored(e.row_id, 0, e.fast_key, proto::Bytes(e.image));
  f.publisher->wait_idle();
  CHECK_FALSE(f.published(e));
  CHECK(f.publisher->stats().published_images == 0);
}

TEST_CASE("publisher: a LOOKUP hit by fast key publishes an entry not yet published") {
  Fixture f;
  Entry e(3);
  PutInput input;
  input.key = e.key;
  input.image = proto::Bytes(e.image);
  input.content_fast = e.content_fast;
  REQUIRE(f.store->put(input));  // stored without telling the publisher (as a daemon restart leaves it)
  CHECK_FALSE(f.published(e));
  auto found = f.store->lookup(daemon::store::Selector::fast_key_id(e.fast_key_id), Visibility{0, true});
  REQUIRE(found);
  const auto* hit = std::get_if<daemon::store::Hit>(&*found);
  REQUIRE(hit != nullptr);
  f.publisher->served(*hit, e.fast_key, e.fast_key_id);
  f.publisher->wait_idle();
  CHECK(f.published(e));
}

TEST_CASE("publisher: REMOVE, a quarantine, a replacement and eviction each remove the file") {
  SECTION("REMOVE") {
    Fixture f;
    Entry e(4);
    f.put(e);
    REQUIRE(f.published(e));
    REQUIRE(f.store->remove(proto::to_hex(proto::key_id(e.key)), Visibility{0, true}));
    CHECK_FALSE(f.published(e));
    CHECK(f.publisher->stats().published_images == 0);
  }
  SECTION("quarantine by REPORT_FAILURE") {
    Fixture f;
    Entry e(5);
    f.put(e);
    REQUIRE(f.published(e));
    daemon::store::FailureReport report;
    report.cu_result = 200;
    auto outcome = f.store->report_failure(proto::key_id(e.key), Visibility{0, true}, report);
    REQUIRE(outcome);
    REQUIRE(outcome->has_value());
    CHECK_FALSE(f.published(e));
    // And it is not published again while quarantined, even if offered.
    f.publisher->stored(e.row_id, 0, e.fast_key, proto::Bytes(e.image));
    f.publisher->wait_idle();
    CHECK_FALSE(f.published(e));
  }
  SECTION("a PUT that replaces the entry: the new image is published, not the old one") {
    Fixture f;
    Entry e(6);
    f.put(e);
    Entry replacement(6);
    replacement.image = testing::sample_image(60, 5000);
    f.put(replacement);
    REQUIRE(f.published(replacement));
    auto decoded_bytes = testing::read_file(f.path_of(replacement));
    auto decoded = proto::decode_published_image(proto::as_bytes(decoded_bytes));
    REQUIRE(decoded);
    CHECK(decoded->reply.image.size() == 5000);
    CHECK(f.publisher->stats().published_images == 1);
  }
  SECTION("eviction by the store's max_size") {
    // Two 600 KB images fit a 1.1 MiB limit together only until a third arrives.
    Fixture f(PublishSettings{}, [](auto& options) { options.max_size_bytes = 1'200'000; });
    Entry a(7, 500'000), b(8, 500'000), c(9, 500'000);
    f.put(a);
    f.put(b);
    REQUIRE(f.published(a));
    f.put(c);  // evicts the least recently used entries first
    CHECK_FALSE(f.published(a));
    CHECK(f.published(c));
  }
  SECTION("GC of a stale driver's entries") {
    auto now = std::make_shared<std::atomic<std::int64_t>>(1'700'000'000'000);
    Fixture f(PublishSettings{}, [now](auto& options) {
      options.clock = [now] { return now->load(); };
      options.stale_driver_after = std::chrono::hours(24);
    });
    Entry e(10);
    f.put(e);
    REQUIRE(f.published(e));
    REQUIRE(f.store->flush_usage());
    now->fetch_add(2 * 24 * 3'600'000LL);  // nobody asked for its driver for two days
    auto gc = f.store->collect_garbage();
    REQUIRE(gc);
    CHECK(gc->evicted_entries == 1);
    CHECK_FALSE(f.published(e));
  }
}

TEST_CASE("publisher: a store reset (every row gone at once) removes every file") {
  Fixture f;
  Entry a(1);
  Entry b(2);
  f.put(a);
  f.put(b);
  REQUIRE(f.published(a));
  REQUIRE(f.published(b));
  f.publisher->row_dropped(daemon::store::k_every_row);
  CHECK_FALSE(f.published(a));
  CHECK_FALSE(f.published(b));
  CHECK(f.publisher->stats().published_images == 0);
  CHECK(f.publisher->stats().published_bytes == 0);
  CHECK(std::distance(fs::directory_iterator(f.publisher->dir_path()), fs::directory_iterator()) == 0);
}

TEST_CASE("publisher: past publish_size the least recently used file goes first") {
  Entry a(11, 4000), b(12, 4000), c(13, 4000);
  // Room for two files of ~4.4 KB, not three.
  Fixture f(PublishSettings{10'000, 1ull << 20});
  f.put(a);
  f.put(b);
  REQUIRE(f.published(a));
  REQUIRE(f.published(b));
  f.publisher->note_used(a.fast_key_id);  // a HIT_NOTE: `a` is now the more recently used
  f.put(c);
  CHECK(f.published(a));
  CHECK_FALSE(f.published(b));
  CHECK(f.published(c));
  CHECK(f.publisher->stats().published_images == 2);
  CHECK(f.publisher->stats().published_bytes <= 10'000);
}

TEST_CASE("publisher: an image over publish_max_image is served by socket only") {
  Fixture f(PublishSettings{64ull << 20, 3000});
  Entry e(14, 4000);
  f.put(e);
  CHECK_FALSE(f.published(e));
  CHECK(f.publisher->stats().publish_failures == 0);
}

TEST_CASE("publisher: a full file system is counted as a publish failure, never an error") {
  testing::TempDir outer;
  const std::string mount_point = outer.file("tmpfs");
  testing::TmpfsMount tmpfs(mount_point, "64k");
  if (!tmpfs.mounted()) {
    JITCACHE_SKIP(tmpfs.error());
  }
  Fixture f(PublishSettings{}, {}, mount_point + "/jitcached.sock.published");
  Entry big(15, 200'000);
  f.put(big);
  CHECK_FALSE(fs::exists(f.publisher->dir_path() + "/" + big.file_name()));
  CHECK(f.publisher->stats().publish_failures == 1);
  CHECK(f.publisher->stats().published_images == 0);
  // No temporary file left behind either.
  CHECK(fs::is_empty(f.publisher->dir_path()));
  // A small one still fits and is published.
  Entry small(16, 2000);
  f.put(small);
  CHECK(fs::exists(f.publisher->dir_path() + "/" + small.file_name()));
}

TEST_CASE("published directory: whatever an earlier run left is removed, and the directory is made 0750") {
  testing::TempDir temp;
  const std::string socket = temp.file("jitcached.sock");
  testing::write_file(socket, "");
  const std::string dir = proto::published_dir_for(socket);
  {
    fs::create_directory(dir);
    testing::write_file(dir + "/" + std::string(64, 'a'), "planted");
    fs::permissions(dir, fs::perms::all);
    auto prepared = daemon::publish::prepare_published_dir(dir, socket);
    REQUIRE(prepared);
    CHECK(fs::is_empty(dir));
    struct stat st {};
    REQUIRE(::stat(dir.c_str(), &st) == 0);
    CHECK((st.st_mode & 07777) == 0750);
    CHECK(st.st_uid == ::geteuid());
  }
  // A link planted in the directory's place is replaced, and what it pointed to is left alone.
  const std::string elsewhere = temp.file("elsewhere");
  fs::create_directory(elsewhere);
  testing::write_file(elsewhere + "/keep", "x");
  fs::remove_all(dir);
  fs::create_directory_symlink(elsewhere, dir);
  auto again = daemon::publish::prepare_published_dir(dir, socket);
  REQUIRE(again);
  CHECK_FALSE(fs::is_symlink(dir));
  CHECK(fs::exists(elsewhere + "/keep"));
}

TEST_CASE("published file: takes the directory's group (the socket's) and not the daemon's own") {
  // A sidecar's daemon runs as gid 10001 with the socket's group 10010 as a supplementary one: its
  // files must carry 10010 or the application cannot read them. Root may give a file any group, so
  // only root can play both parts here.
  if (::geteuid() != 0) {
    JITCACHE_SKIP("needs root to give the directory a group the test process is not running as");
  }
  testing::TempDir temp;
  const std::string dir = temp.file("jitcached.sock.published");
  fs::create_directory(dir);
  const gid_t socket_group = ::getegid() + 61010;
  REQUIRE(::chown(dir.c_str(), static_cast<uid_t>(-1), socket_group) == 0);
  const int dir_fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  REQUIRE(dir_fd >= 0);
  const std::string head = "head";
  const std::string image = "image";
  auto file =
      daemon::publish::write_temporary(dir_fd, std::string(64, 'b'), proto::as_bytes(head), proto::as_bytes(image));
  REQUIRE(file);
  REQUIRE(daemon::publish::rename_into_place(dir_fd, *file));
  struct stat st {};
  REQUIRE(::fstatat(dir_fd, std::string(64, 'b').c_str(), &st, 0) == 0);
  ::close(dir_fd);
  CHECK(st.st_gid == socket_group);
  CHECK((st.st_mode & 07777) == 0640);
}
