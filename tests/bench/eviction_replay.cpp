#include <tests/bench/eviction_replay.hpp>

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include <proto/digest.hpp>
#include <proto/key.hpp>

#include <daemon/store/selector.hpp>
#include <daemon/store/sqlite_store.hpp>

namespace jitcache::bench {

namespace {

using daemon::store::SqliteStore;

proto::KeyFields key_of(std::uint32_t index) {
  proto::KeyFields key;
  key.content = proto::sha256(proto::as_bytes("bench_eviction entry " + std::to_string(index)));
  key.arch = "sm_90";
  key.driver_api = 13000;
  key.driver_build = "580.159.04";
  key.options = "-O3";
  return key;
}

// Incompressible bytes, as many as the largest entry: every image is a prefix of them.
std::vector<std::uint8_t> filler(std::uint64_t size) {
  std::vector<std::uint8_t> bytes(size);
  std::uint64_t state = 0x243f6a8885a308d3ull;
  for (auto& byte : bytes) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    byte = static_cast<std::uint8_t>(state >> 56);
  }
  return bytes;
}

}  // namespace

common::Result<ReplayFigures> replay(const Trace& trace, const ReplaySettings& settings) {
  std::uint64_t largest = 0;
  for (const auto& entry : trace.entries) largest = std::max(largest, entry.stored_bytes);
  const std::vector<std::uint8_t> bytes = filler(largest);

  const std::filesystem::path path = settings.directory / "bench_eviction.db";
  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path.string() + suffix);
  auto now = std::make_shared<std::atomic<std::int64_t>>(1'700'000'000'000);
  daemon::store::SqliteStoreOptions options;
  options.path = path;
  options.reader_count = 1;
  options.hot_cache_bytes = 0;    // every hit reads the database, as a cold daemon would
  options.compression_level = 0;  // stored size == the trace's size
  options.max_size_bytes = settings.max_size_bytes;
  options.eviction_order = settings.order;
  options.clock = [now] { return now->load(); };
  auto store = SqliteStore::open(options);
  JITCACHE_TRY(store);

  ReplayFigures figures;
  const auto start = std::chrono::steady_clock::now();
  const daemon::store::Visibility who{daemon::store::k_shared_namespace, true};
  for (std::uint32_t index : trace.requests) {
    const TraceEntry& entry = trace.entries[index];
    const double compile_s = static_cast<double>(entry.compile_us) / 1e6;
    const proto::KeyFields key = key_of(index);
    auto found = (*store)->lookup(daemon::store::Selector::key(key), who);
    JITCACHE_TRY(found);
    ++figures.requests;
    if (std::holds_alternative<daemon::store::Hit>(*found)) {
      ++figures.hits;
      figures.compile_seconds_saved += compile_s;
      figures.bytes_hit += entry.stored_bytes;
    } else {
      figures.compile_seconds_missed += compile_s;
      daemon::store::PutInput input;
      input.key = key;
      input.producer = "bench_eviction";
      input.compile_time_us = entry.compile_us;
      input.content_fast = proto::xxh3_128(proto::Bytes(key.content.bytes));
      input.image = proto::Bytes(bytes.data(), entry.stored_bytes);
      auto put = (*store)->put(input);
      // An image larger than max_size alone is refused: the next request for it misses again.
      if (!put && put.error().code != common::ErrorCode::too_large) return put.error();
      if (put) figures.bytes_written += entry.stored_bytes;
    }
    if (settings.flush_every != 0 && figures.requests % settings.flush_every == 0) {
      JITCACHE_TRY((*store)->flush_usage());
    }
    now->fetch_add(1000);
  }
  figures.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  auto totals = (*store)->totals();
  JITCACHE_TRY(totals);
  figures.evictions = totals->evictions;
  store->reset();
  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path.string() + suffix);
  return figures;
}

}  // namespace jitcache::bench
