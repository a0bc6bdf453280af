// Crash safety of the store (LevelDB db/fault_injection_test.cc is the model): the
// real jitcached is killed with SIGKILL at random moments while client threads PUT (new keys and
// replacements) and LOOKUP, and restarted. After every restart the database file passes
// PRAGMA quick_check, every image in it matches its checksum (hashed here, outside the daemon),
// and every PUT acknowledged before the kill is served byte-identical; a PUT in flight at the kill
// is either wholly there or wholly absent (for a replacement: the old image or the new one).
//
// 200 iterations by default (about half a minute); JITCACHE_SOAK_ITERATIONS=N for a long soak,
// JITCACHE_CRASH_SEED=S to replay a failure (the seed is printed with every failure).
#include <catch2/catch.hpp>

#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <tests/support/daemon_process.hpp>
#include <tests/support/sample_entries.hpp>
#include <tests/support/store_file_check.hpp>
#include <tests/support/temp_dir.hpp>

using namespace jitcache;
using testing::DaemonProcess;
using testing::TempDir;

namespace {

std::uint64_t env_number(const char* name, std::uint64_t fallback) {
  const char* value = std::getenv(name);
  if (value == nullptr || *value == '\0') return fallback;
  return std::strtoull(value, nullptr, 10);
}

using Image = std::vector<std::uint8_t>;

// What the store may hold for one key: `acceptable` lists every image it may serve. An
// acknowledged PUT narrows it to that image; a PUT in flight at the kill adds its image beside the
// last acknowledged one. `may_be_absent` until a PUT of the key was acknowledged (or seen after a
// restart).
struct Expected {
  std::vector<Image> acceptable;
  bool may_be_absent = true;
};

class Model {
 public:
  void begin_put(std::uint64_t key, const Image& image) {
    std::lock_guard lock(m_mutex);
    m_keys[key].acceptable.push_back(image);
  }
  void acknowledged(std::uint64_t key, const Image& image) {
    std::lock_guard lock(m_mutex);
    auto& e = m_keys[key];
    e.acceptable = {image};
    e.may_be_absent = false;
    m_acknowledged_puts++;
  }
  // Single-threaded use between iterations (no client threads running).
  std::map<std::uint64_t, Expected>& keys() { return m_keys; }
  std::uint64_t acknowledged_puts() const { return m_acknowledged_puts; }

 private:
  std::mutex m_mutex;
  std::map<std::uint64_t, Expected> m_keys;
  std::uint64_t m_acknowledged_puts = 0;
};

// Log-uniform from a few hundred bytes (one entries row and a blob in one page) to 40 KiB (a chain
// of overflow pages), so that the WAL crosses its checkpoint threshold every few dozen iterations.
Image random_image(std::mt19937_64& random) {
  std::uniform_real_distribution<double> log_size(std::log(200.0), std::log(40.0 * 1024));
  const auto size = static_cast<std::size_t>(std::exp(log_size(random)));
  return testing::sample_image(random(), size);
}

// One client thread: PUTs until the daemon dies under it. Each writer owns the keys it creates
// (`first_key` + n), so replacements of one key never race between threads.
void writer_loop(const DaemonProcess& daemon, Model& model, std::uint64_t seed, std::uint64_t first_key) {
  std::mt19937_64 random(seed);
  auto client = client::transport::DaemonClient::connect(daemon.connect_options());
  if (!client) return;  // killed before we connected
  std::vector<std::uint64_t> mine;
  for (std::uint64_t n = 0;; ++n) {
    // One PUT in five replaces a key this thread wrote earlier in the iteration.
    const bool replace = !mine.empty() && random() % 5 == 0;
    const std::uint64_t key = replace ? mine[random() % mine.size()] : first_key + n;
    const Image image = random_image(random);
    model.begin_put(key, image);
    auto put = client->put(testing::sample_put(key, image));
    if (!put) return;  // the daemon is gone
    model.acknowledged(key, image);
    if (!replace) mine.push_back(key);
  }
}

// Another client: LOOKUPs of keys it is told about, so that hits pile up and the daemon's usage
// flush (every 100 ms) also runs into kills.
void reader_loop(const DaemonProcess& daemon, std::vector<std::uint64_t> keys, std::uint64_t seed) {
  if (keys.empty()) return;
  std::mt19937_64 random(seed);
  auto client = client::transport::DaemonClient::connect(daemon.connect_options());
  if (!client) return;
  for (;;) {
    auto found = client->lookup(testing::sample_key(keys[random() % keys.size()]));
    if (!found) return;
  }
}

// The WAL header's checkpoint sequence number (big-endian at offset 12), which SQLite increments
// whenever a writer restarts the WAL after a checkpoint; 0 when there is no WAL.
std::uint32_t wal_checkpoint_sequence(const std::string& db_path) {
  std::ifstream wal(db_path + "-wal", std::ios::binary);
  unsigned char header[16] = {};
  if (!wal.read(reinterpret_cast<char*>(header), sizeof header)) return 0;
  return (std::uint32_t{header[12]} << 24) | (std::uint32_t{header[13]} << 16) | (std::uint32_t{header[14]} << 8) |
         header[15];
}

std::string describe(const Expected& e) {
  return std::to_string(e.acceptable.size()) + " acceptable image(s)" +
         (e.may_be_absent ? ", or absent" : ", never absent");
}

}  // namespace

TEST_CASE(
    "store crash safety: SIGKILL during sustained PUTs never loses an acknowledged PUT or serves a damaged image") {
  const std::uint64_t iterations = env_number("JITCACHE_SOAK_ITERATIONS", 200);
  const std::uint64_t seed = env_number("JITCACHE_CRASH_SEED", std::random_device{}());
  INFO("seed " << seed << " (replay with JITCACHE_CRASH_SEED=" << seed << ")");
  std::mt19937_64 random(seed);

  // Rationale: a fresh store every 50 iterations keeps each post-crash scan short (the file stays
  // around 10-30 MB) while every store still lives through several WAL checkpoints.
  constexpr std::uint64_t k_iterations_per_store = 50;
  constexpr unsigned k_writers = 2;

  std::unique_ptr<TempDir> dir;
  std::unique_ptr<DaemonProcess> daemon;
  Model model;
  std::uint64_t kills_with_puts_in_flight = 0;
  std::uint64_t checked_lookups = 0;
  std::uint64_t wal_restarts_seen = 0;  // iterations across which the WAL was checkpointed and restarted
  std::uint32_t last_checkpoint_sequence = 0;

  for (std::uint64_t iteration = 0; iteration < iterations; ++iteration) {
    INFO("iteration " << iteration);
    if (iteration % k_iterations_per_store == 0) {
      daemon.reset();
      dir = std::make_unique<TempDir>("jitcache-crash");
      testing::DaemonOptions options;
      options.extra_args = {"--usage-flush-interval", "100ms"};
      options.extra_env = {{"JITCACHE_COMPILE", "false"}};
      daemon = std::make_unique<DaemonProcess>(*dir, options);
      model.keys().clear();
    }
    // The daemon restarted for the previous iteration's checks takes this iteration's PUTs.
    if (!daemon->running()) daemon->start();

    // The keys earlier iterations left in the store, for the reader.
    std::vector<std::uint64_t> known;
    for (const auto& [key, e] : model.keys()) {
      if (!e.may_be_absent) known.push_back(key);
    }
    const std::uint64_t puts_before = model.acknowledged_puts();
    std::vector<std::thread> clients;
    for (unsigned w = 0; w < k_writers; ++w) {
      const std::uint64_t first_key = ((iteration + 1) << 32) | (std::uint64_t{w} << 24);
      clients.emplace_back(writer_loop, std::cref(*daemon), std::ref(model), random(), first_key);
    }
    clients.emplace_back(reader_loop, std::cref(*daemon), known, random());

    // Anywhere from before the first PUT arrives to a few dozen PUTs in.
    std::this_thread::sleep_for(std::chrono::microseconds(random() % 40000));
    daemon->kill_hard();
    for (auto& t : clients) t.join();
    std::size_t in_flight = 0;
    for (const auto& [key, e] : model.keys()) in_flight += e.acceptable.size() > 1 || e.may_be_absent;
    if (in_flight > 0 && model.acknowledged_puts() > puts_before) ++kills_with_puts_in_flight;

    daemon->start();
    const std::string db_path = daemon->state_dir() + "/jitcache.db";
    const std::uint32_t sequence = wal_checkpoint_sequence(db_path);
    if (sequence != last_checkpoint_sequence) ++wal_restarts_seen;
    last_checkpoint_sequence = sequence;
    const auto file = testing::check_store_file(db_path);
    INFO("store file: " << file.open_error << " quick_check: " << file.quick_check);
    REQUIRE(file.open_error.empty());
    REQUIRE(file.quick_check == "ok");
    for (const auto& bad : file.bad) FAIL_CHECK("damaged entry in the file: " << bad);
    REQUIRE(file.bad.empty());
    CHECK(file.images_other_codec + file.images_hashed == file.entries);

    auto client = daemon->client();
    for (auto it = model.keys().begin(); it != model.keys().end();) {
      auto& [key, expected] = *it;
      // Every key this iteration touched; keys settled in an earlier one: a sample each time, and all
      // of them in each store's last iteration.
      const bool settled = expected.acceptable.size() == 1 && !expected.may_be_absent && (key >> 32) != iteration + 1;
      const bool last_of_store = (iteration + 1) % k_iterations_per_store == 0 || iteration + 1 == iterations;
      if (settled && random() % 8 != 0 && !last_of_store) {
        ++it;
        continue;
      }
      auto found = client.lookup(testing::sample_key(key));
      INFO("key " << key << ": " << describe(expected));
      REQUIRE(found);
      ++checked_lookups;
      if (!found->has_value()) {
        CHECK(expected.may_be_absent);
        if (expected.may_be_absent) {
          it = model.keys().erase(it);  // never acknowledged, not written: forget it
          continue;
        }
      } else {
        const auto bytes = (*found)->bytes();
        const Image served(bytes.begin(), bytes.end());
        bool matches = false;
        for (const auto& image : expected.acceptable) matches = matches || image == served;
        CHECK(matches);
        // Whatever the store holds after a restart is what it must hold from now on.
        expected.acceptable = {served};
        expected.may_be_absent = false;
      }
      ++it;
    }
  }
  // Evidence that the kills landed among PUTs, not only between bursts.
  CHECK(model.acknowledged_puts() > 0);
  CHECK(kills_with_puts_in_flight > iterations / 2);
  // And that the stores lived through WAL checkpoints, not only appends to one WAL.
  if (iterations >= 100) CHECK(wal_restarts_seen >= iterations / 50);
  std::printf(
      "crash safety: %llu iterations, %llu acknowledged PUTs, %llu kills with PUTs in flight, "
      "%llu WAL checkpoints crossed, %llu lookups checked\n",
      static_cast<unsigned long long>(iterations), static_cast<unsigned long long>(model.acknowledged_puts()),
      static_cast<unsigned long long>(kills_with_puts_in_flight), static_cast<unsigned long long>(wal_restarts_seen),
      static_cast<unsigned long long>(checked_lookups));
}
