// bench_store_scale: does LOOKUP slow down as the store grows? For each store size (1 000 and
// 1 000 000 entries by default) it fills a fresh store with small synthetic images, then measures
// LOOKUP hits of uniformly random keys through the real jitcached on its socket (p50/p99 latency and
// throughput), and reports the database file's size against the raw bytes it holds. Target (issue
// 5): the largest store at most 1.2x slower than the smallest. A program that prints figures
// (docs/benchmarks.md records them), not a timed test: it exits non-zero only when something fails.
//
// The fill bypasses the daemon (its socket round trip would only slow a 1M fill): a file created by
// daemon::store::SqliteStore, filled in batched transactions (fill_in_batches), or with
// SqliteStore::put per entry (--fill-with-puts).
#include <sqlite3.h>
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <filesystem>
#include <iostream>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include <client/src/transport/daemon_client.hpp>
#include <daemon/store/sqlite_store.hpp>
#include <proto/jit_options.hpp>
#include <proto/key.hpp>

#include <tests/bench/load_runner.hpp>
#include <tests/bench/machine_info.hpp>
#include <tests/support/daemon_process.hpp>
#include <tests/support/temp_dir.hpp>

namespace jitcache::bench {
namespace {

using client::transport::DaemonClient;
namespace store = daemon::store;

struct BenchOptions {
  std::vector<std::uint64_t> entries{1000, 1000000};
  std::size_t image_min = 256;
  std::size_t image_max = 1024;
  std::vector<unsigned> clients{1, 8};
  double seconds = 5.0;
  double warm_up = 1.0;
  std::vector<std::string> daemon_args;  // passed to jitcached, e.g. --hot-cache-size 0
  bool fill_with_puts = false;           // SqliteStore::put per entry instead of batched INSERTs
  // In-process cells: SqliteStore::lookup on one thread, no daemon, no socket, no hot image cache,
  // with this page cache per connection (MiB); separates the store's cost from the rest.
  std::vector<std::uint64_t> store_cache_mib;
  std::uint64_t store_mmap_mib = 0;
};

struct CannotRun : std::runtime_error {
  using std::runtime_error::runtime_error;
};

proto::KeyFields key_template() {
  proto::KeyFields key;
  key.arch = "sm_90";
  key.driver_api = 13000;
  key.driver_build = "580.159.04";
  key.options = proto::default_option_text();
  return key;
}

// One store: its entries' content digests (to rebuild any key without hashing during the load)
// and what the fill cost.
struct FilledStore {
  std::vector<proto::Digest256> contents;
  std::uint64_t raw_bytes = 0;
  double fill_seconds = 0;
  std::uint64_t file_bytes = 0;  // the database file and its WAL after the store closed
};

std::uint64_t size_or_zero(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 ? static_cast<std::uint64_t>(st.st_size) : 0;
}

// The synthetic images, seeded so that every run stores the same bytes.
class ImageSource {
 public:
  ImageSource(std::uint64_t seed, const BenchOptions& options)
      : m_random(seed), m_size(options.image_min, options.image_max), m_image(options.image_max) {}
  proto::Bytes next() {
    m_image.resize(m_size(m_random));
    for (std::size_t b = 0; b < m_image.size(); b += 8) {
      const std::uint64_t word = m_random();
      std::memcpy(m_image.data() + b, &word, std::min<std::size_t>(8, m_image.size() - b));
    }
    return proto::Bytes(m_image);
  }

 private:
  std::mt19937_64 m_random;
  std::uniform_int_distribution<std::size_t> m_size;
  std::vector<std::uint8_t> m_image;
};

proto::Digest256 content_of(std::uint64_t i) {
  return proto::content_digest(proto::as_bytes("bench source " + std::to_string(i)));
}

void progress(std::uint64_t done, std::uint64_t count) {
  if (count >= 100000 && done % 100000 == 0) {
    std::fprintf(stderr, "  filled %llu of %llu\n", static_cast<unsigned long long>(done),
                 static_cast<unsigned long long>(count));
  }
}

std::unique_ptr<store::SqliteStore> open_store(const std::string& db_path) {
  store::SqliteStoreOptions store_options;
  store_options.path = db_path;
  store_options.reader_count = 1;
  store_options.hot_cache_bytes = 0;
  auto opened = store::SqliteStore::open(store_options);
  if (!opened) throw CannotRun("opening " + db_path + ": " + opened.error().message);
  return std::move(*opened);
}

// As a PUT stores an entry: SqliteStore::put, one transaction each.
void fill_with_puts(const std::string& db_path, std::uint64_t count, ImageSource& images, FilledStore& filled) {
  auto sqlite_store = open_store(db_path);
  store::PutInput input;
  input.key = key_template();
  input.producer = "bench_store_scale";
  for (std::uint64_t i = 0; i < count; ++i) {
    input.key.content = content_of(i);
    input.content_fast = proto::xxh3_128(proto::Bytes(input.key.content.bytes));
    input.image = images.next();
    if (auto put = sqlite_store->put(input); !put) throw CannotRun("filling: " + put.error().message);
    filled.contents.push_back(input.key.content);
    filled.raw_bytes += input.image.size();
    progress(i + 1, count);
  }
}

// Rationale: one PUT is one transaction, and each writes ~7 pages of 16 KiB to the WAL (the row,
// four indexes, the totals row, the blob) plus a checkpoint with its fsyncs every ~140 PUTs: about
// 2 500 small PUTs/s here, 7 minutes for a million. The bench fills in transactions of 10 000
// entries with the store's own INSERTs on a connection of its own, into a file SqliteStore created
// (schema, page size, WAL); the file has the same rows, indexes and totals. Every measured LOOKUP
// checks its image's checksum, so a row this got wrong would show as a failed run, not a figure.
void fill_in_batches(const std::string& db_path, std::uint64_t count, ImageSource& images, FilledStore& filled) {
  open_store(db_path).reset();  // creates the file and its schema
  sqlite3* db = nullptr;
  auto check = [&](int rc, const char* what) {
    if (rc != SQLITE_OK && rc != SQLITE_DONE) throw CannotRun(std::string(what) + ": " + sqlite3_errmsg(db));
  };
  check(sqlite3_open(db_path.c_str(), &db), "opening the store");
  check(sqlite3_exec(db, "PRAGMA foreign_keys = ON; PRAGMA synchronous = NORMAL; PRAGMA cache_size = -262144", nullptr,
                     nullptr, nullptr),
        "pragmas");
  sqlite3_stmt* entry = nullptr;
  sqlite3_stmt* blob = nullptr;
  check(sqlite3_prepare_v2(db,
                           "INSERT INTO entries (key_id, namespace, key_schema, content_digest, arch, driver_api,"
                           " driver_build, options, producer, codec, raw_size, stored_size, checksum, created_at_ms,"
                           " last_used_at_ms, hits, compile_time_us, content_fast, fast_key_id) VALUES (?1, 0, ?2, ?3,"
                           " ?4, ?5, ?6, ?7, 'bench_store_scale', 0, ?8, ?8, ?9, ?10, ?10, 0, 0, ?11, ?12)",
                           -1, &entry, nullptr),
        "preparing");
  check(sqlite3_prepare_v2(db, "INSERT INTO blobs (entry_id, data) VALUES (?1, ?2)", -1, &blob, nullptr), "preparing");
  proto::KeyFields key = key_template();
  const auto now =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
          .count();
  constexpr std::uint64_t k_batch = 10000;
  for (std::uint64_t i = 0; i < count; ++i) {
    if (i % k_batch == 0) check(sqlite3_exec(db, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr), "BEGIN");
    key.content = content_of(i);
    const proto::Bytes image = images.next();
    const proto::Digest256 id = proto::key_id(key);
    const proto::Checksum128 sum = proto::xxh3_128(image);
    // Every entry has a fast key (schema 7): as a PUT computes it.
    const proto::Checksum128 content_fast = proto::xxh3_128(proto::Bytes(key.content.bytes));
    const proto::Digest256 fast_key_id = proto::fast_key_id(proto::fast_key_of(key, content_fast));
    sqlite3_reset(entry);
    sqlite3_bind_blob(entry, 1, id.bytes.data(), static_cast<int>(id.bytes.size()), SQLITE_STATIC);
    sqlite3_bind_int64(entry, 2, key.key_schema);
    sqlite3_bind_blob(entry, 3, key.content.bytes.data(), static_cast<int>(key.content.bytes.size()), SQLITE_STATIC);
    sqlite3_bind_text(entry, 4, key.arch.c_str(), -1, SQLITE_STATIC);
    sqlite3_bind_int64(entry, 5, key.driver_api);
    sqlite3_bind_text(entry, 6, key.driver_build.c_str(), -1, SQLITE_STATIC);
    sqlite3_bind_text(entry, 7, key.options.c_str(), -1, SQLITE_STATIC);
    sqlite3_bind_int64(entry, 8, static_cast<sqlite3_int64>(image.size()));
    sqlite3_bind_blob(entry, 9, sum.bytes.data(), static_cast<int>(sum.bytes.size()), SQLITE_STATIC);
    sqlite3_bind_int64(entry, 10, now);
    sqlite3_bind_blob(entry, 11, content_fast.bytes.data(), static_cast<int>(content_fast.bytes.size()), SQLITE_STATIC);
    sqlite3_bind_blob(entry, 12, fast_key_id.bytes.data(), static_cast<int>(fast_key_id.bytes.size()), SQLITE_STATIC);
    check(sqlite3_step(entry), "inserting an entry");
    sqlite3_reset(blob);
    sqlite3_bind_int64(blob, 1, sqlite3_last_insert_rowid(db));
    sqlite3_bind_blob(blob, 2, image.data(), static_cast<int>(image.size()), SQLITE_STATIC);
    check(sqlite3_step(blob), "inserting an image");
    filled.contents.push_back(key.content);
    filled.raw_bytes += image.size();
    if ((i + 1) % k_batch == 0 || i + 1 == count)
      check(sqlite3_exec(db, "COMMIT", nullptr, nullptr, nullptr), "COMMIT");
    progress(i + 1, count);
  }
  sqlite3_finalize(entry);
  sqlite3_finalize(blob);
  check(sqlite3_close(db), "closing");  // the last connection checkpoints and removes the WAL

  // The daemon's own view of the file must agree with what was written.
  auto totals = open_store(db_path)->totals();
  if (!totals || totals->entries != count || totals->bytes_raw != filled.raw_bytes) {
    throw CannotRun("the batched fill does not match the store's totals");
  }
}

FilledStore fill_store(const std::string& db_path, std::uint64_t count, const BenchOptions& options) {
  FilledStore filled;
  filled.contents.reserve(count);
  ImageSource images(count, options);
  const auto start = std::chrono::steady_clock::now();
  if (options.fill_with_puts) {
    fill_with_puts(db_path, count, images, filled);
  } else {
    fill_in_batches(db_path, count, images, filled);
  }
  filled.fill_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  filled.file_bytes = size_or_zero(db_path) + size_or_zero(db_path + "-wal");
  return filled;
}

class RandomLookupClient final : public LoadClient {
 public:
  RandomLookupClient(DaemonClient client, const FilledStore& store, std::uint64_t seed)
      : m_client(std::move(client)), m_store(store), m_random(seed), m_key(key_template()) {}

  bool request(std::string& failure) override {
    m_key.content = m_store.contents[m_random() % m_store.contents.size()];
    auto fetched = m_client.lookup(m_key);
    if (!fetched) {
      failure = "LOOKUP: " + fetched.error().message;
      return false;
    }
    if (!*fetched) {
      failure = "LOOKUP: a miss for a key that was stored";
      return false;
    }
    return true;
  }

 private:
  DaemonClient m_client;
  const FilledStore& m_store;
  std::mt19937_64 m_random;
  proto::KeyFields m_key;
};

struct Cell {
  std::uint64_t entries = 0;
  unsigned clients = 0;
  LoadResult result;
};

std::vector<Cell> measure(const FilledStore& store, std::uint64_t entries, const testing::TempDir& dir,
                          const BenchOptions& options) {
  testing::DaemonOptions daemon_options;
  daemon_options.extra_env = {{"JITCACHE_COMPILE", "false"}};
  daemon_options.extra_args = options.daemon_args;
  testing::DaemonProcess daemon(dir, daemon_options);
  daemon.start(std::chrono::seconds(120));
  std::vector<Cell> cells;
  for (unsigned clients : options.clients) {
    std::vector<std::unique_ptr<LoadClient>> load;
    for (unsigned c = 0; c < clients; ++c) {
      load.push_back(std::make_unique<RandomLookupClient>(daemon.client(), store, entries * 131 + c));
    }
    LoadSettings settings;
    settings.warm_up = std::chrono::duration<double>(options.warm_up);
    settings.measure = std::chrono::duration<double>(options.seconds);
    Cell cell{entries, clients, run_load(settings, std::move(load))};
    if (cell.result.failures > 0) throw CannotRun(cell.result.first_failure);
    std::printf("  %9llu entries  %2u client(s)  %9.0f lookups/s  p50 %7.1f us  p99 %7.1f us\n",
                static_cast<unsigned long long>(entries), clients, cell.result.requests_per_second(),
                cell.result.latency.p50_us, cell.result.latency.p99_us);
    std::fflush(stdout);
    cells.push_back(cell);
  }
  // Hits are written by the daemon's periodic usage flush (usage_flush_interval): with keys spread
  // over a large store, one flush rewrites many pages, which the WAL shows.
  const std::string db_path = daemon.state_dir() + "/jitcache.db";
  std::printf("  WAL after the cells: %.1f MiB\n", static_cast<double>(size_or_zero(db_path + "-wal")) / (1 << 20));
  if (daemon.stop() != 0) throw CannotRun("jitcached did not exit cleanly; see " + daemon.log_path());
  return cells;
}

// LOOKUP straight into SqliteStore for `seconds`, one thread, uniformly random keys.
void measure_in_process(const FilledStore& filled, const std::string& db_path, std::uint64_t cache_mib,
                        const BenchOptions& options) {
  store::SqliteStoreOptions store_options;
  store_options.path = db_path;
  store_options.reader_count = 1;
  store_options.hot_cache_bytes = 0;
  store_options.cache_size_kib = static_cast<std::int64_t>(cache_mib) * 1024;
  store_options.reader_mmap_bytes = static_cast<std::int64_t>(options.store_mmap_mib) << 20;
  auto opened = store::SqliteStore::open(store_options);
  if (!opened) throw CannotRun("opening " + db_path + ": " + opened.error().message);
  std::mt19937_64 random(cache_mib);
  proto::KeyFields key = key_template();
  LatencyRecorder recorder;
  auto lookups = [&](double seconds, bool record) {
    const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    while (std::chrono::steady_clock::now() < end) {
      key.content = filled.contents[random() % filled.contents.size()];
      const auto id = proto::key_id(key);
      const auto start = std::chrono::steady_clock::now();
      auto found = (*opened)->lookup(store::Selector::key_id(id), store::Visibility{});
      const auto took = std::chrono::steady_clock::now() - start;
      if (!found || !store::is_hit(*found)) throw CannotRun("in-process lookup failed or missed");
      if (record) recorder.record(std::chrono::duration_cast<std::chrono::nanoseconds>(took));
    }
  };
  lookups(options.warm_up, false);
  lookups(options.seconds, true);
  const auto summary = recorder.summarize();
  std::printf(
      "  %9zu entries  in-process, %4llu MiB page cache, %llu MiB mmap  %9.0f lookups/s  p50 %7.1f us  p99 %7.1f us\n",
      filled.contents.size(), static_cast<unsigned long long>(cache_mib),
      static_cast<unsigned long long>(options.store_mmap_mib), static_cast<double>(summary.count) / options.seconds,
      summary.p50_us, summary.p99_us);
  std::fflush(stdout);
}

int run(const BenchOptions& options) {
  const MachineInfo machine = read_machine_info();
  std::printf("bench_store_scale: %s, %u of %u CPUs usable, %llu MiB, %s, load %.2f\n", machine.cpu_model.c_str(),
              machine.usable_cpus, machine.online_cpus, static_cast<unsigned long long>(machine.memory_mib),
              machine.kernel.c_str(), machine.load_average);
  std::printf("images %zu..%zu bytes (uniform), uniformly random keys, %.1f s per cell after %.1f s warm-up\n",
              options.image_min, options.image_max, options.seconds, options.warm_up);

  std::vector<Cell> all;
  for (std::uint64_t entries : options.entries) {
    testing::TempDir dir("jitcache-bench-scale");
    std::filesystem::create_directories(dir.file("store"));
    const std::string db_path = dir.file("store") + "/jitcache.db";
    std::printf("store of %llu entries:\n", static_cast<unsigned long long>(entries));
    std::fflush(stdout);
    const FilledStore store = fill_store(db_path, entries, options);
    std::printf(
        "  fill %.1f s (%.0f entries/s, %s); file %.1f MiB for %.1f MiB "
        "raw = %.2fx (%.0f bytes/entry)\n",
        store.fill_seconds, static_cast<double>(entries) / store.fill_seconds,
        options.fill_with_puts ? "SqliteStore::put, one transaction each" : "batches of 10 000 INSERTs",
        static_cast<double>(store.file_bytes) / (1 << 20), static_cast<double>(store.raw_bytes) / (1 << 20),
        static_cast<double>(store.file_bytes) / static_cast<double>(store.raw_bytes),
        static_cast<double>(store.file_bytes) / static_cast<double>(entries));
    std::fflush(stdout);
    for (auto& cell : measure(store, entries, dir, options)) all.push_back(cell);
    for (auto cache_mib : options.store_cache_mib) measure_in_process(store, db_path, cache_mib, options);
  }

  // The largest store against the smallest, per client count.
  const std::uint64_t smallest = options.entries.front();
  const std::uint64_t largest = options.entries.back();
  if (smallest != largest) {
    std::printf("largest (%llu) vs smallest (%llu) store:\n", static_cast<unsigned long long>(largest),
                static_cast<unsigned long long>(smallest));
    for (unsigned clients : options.clients) {
      const Cell* small = nullptr;
      const Cell* large = nullptr;
      for (const auto& cell : all) {
        if (cell.clients != clients) continue;
        if (cell.entries == smallest) small = &cell;
        if (cell.entries == largest) large = &cell;
      }
      if (small == nullptr || large == nullptr) continue;
      const double slowdown = small->result.requests_per_second() / large->result.requests_per_second();
      std::printf("  %2u client(s): throughput %.2fx slower, p50 %.2fx, p99 %.2fx (target: at most 1.20x) %s\n",
                  clients, slowdown, large->result.latency.p50_us / small->result.latency.p50_us,
                  large->result.latency.p99_us / small->result.latency.p99_us, slowdown <= 1.2 ? "met" : "MISSED");
    }
  }
  return 0;
}

}  // namespace
}  // namespace jitcache::bench

int main(int argc, char** argv) {
  jitcache::bench::BenchOptions options;
  CLI::App app{"bench_store_scale: LOOKUP latency and throughput of jitcached against the size of its store"};
  app.add_option("--entries", options.entries, "Store sizes to fill and measure, smallest first")->delimiter(',');
  app.add_option("--image-min", options.image_min, "Smallest synthetic image, bytes");
  app.add_option("--image-max", options.image_max, "Largest synthetic image, bytes");
  app.add_option("--clients", options.clients, "Client threads per cell")->delimiter(',');
  app.add_option("--seconds", options.seconds, "Measured seconds per cell");
  app.add_option("--warm-up", options.warm_up, "Unmeasured seconds before each cell");
  app.add_flag("--fill-with-puts", options.fill_with_puts,
               "Fill with SqliteStore::put, one transaction per entry as a PUT (slow), instead of batches");
  app.add_option("--store-cache-mib", options.store_cache_mib,
                 "Also measure SqliteStore::lookup in process with these page cache sizes (MiB per connection)")
      ->delimiter(',');
  app.add_option("--store-mmap-mib", options.store_mmap_mib,
                 "Memory-mapped reads for the in-process cells' reader connection, MiB (0: none)");
  app.add_option("--daemon-arg", options.daemon_args,
                 "An argument passed to jitcached, e.g. --daemon-arg=--hot-cache-size=0 (repeat for more)")
      ->allow_extra_args(false);
  CLI11_PARSE(app, argc, argv);
  if (options.entries.empty() || options.clients.empty() || options.image_min == 0 ||
      options.image_min > options.image_max) {
    std::cerr << "bench_store_scale: --entries and --clients must not be empty, and 0 < --image-min <= --image-max\n";
    return 2;
  }
  try {
    return jitcache::bench::run(options);
  } catch (const std::exception& e) {
    std::cerr << "bench_store_scale: " << e.what() << "\n";
    return 1;
  }
}
