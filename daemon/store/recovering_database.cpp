#include <daemon/store/recovering_database.hpp>

#include <spdlog/spdlog.h>

#include <chrono>
#include <filesystem>
#include <system_error>

#include <common/result.hpp>
#include <daemon/store/set_aside.hpp>

namespace jitcache::daemon::store {

using common::ErrorCode;

namespace {

Result<std::unique_ptr<StoreDatabase>> open_fresh(const SqliteStoreOptions& options, const common::Error& cause) {
  // A retry after a swap that could not open the new database: the damaged file is gone already.
  std::error_code ec;
  if (!std::filesystem::exists(options.path, ec)) return open_store_database(options);
  auto moved = set_aside_database(options.path, std::chrono::system_clock::now());
  JITCACHE_TRY(moved);
  spdlog::error(
      "store: the database {} is corrupt ({}); it was moved aside to {} for inspection and an empty "
      "store replaces it (docs/operations.md \"Corruption\")",
      options.path.string(), cause.message, moved->string());
  return open_store_database(options);
}

// Whatever is at the path now: a database to open, nothing (a new one is made), or a corrupt file
// (set aside).
Result<std::unique_ptr<StoreDatabase>> open_at_path(const SqliteStoreOptions& options) {
  auto database = open_store_database(options);
  if (!database && database.error().code == ErrorCode::corrupt) database = open_fresh(options, database.error());
  return database;
}

}  // namespace

Result<std::unique_ptr<RecoveringDatabase>> RecoveringDatabase::open(const SqliteStoreOptions& options) {
  auto database = options.recover ? open_at_path(options) : open_store_database(options);
  JITCACHE_TRY(database);
  return std::unique_ptr<RecoveringDatabase>(new RecoveringDatabase(options, std::move(*database)));
}

RecoveringDatabase::RecoveringDatabase(SqliteStoreOptions options, std::unique_ptr<StoreDatabase> database)
    : m_options(std::move(options)), m_database(std::move(database)) {}

RecoveringDatabase::Entry RecoveringDatabase::enter() {
  std::unique_lock lock(m_mutex);
  m_changed.wait(lock, [this] { return !m_swapping; });
  ++m_active;
  return Entry{m_database.get(), m_generation};
}

void RecoveringDatabase::leave() {
  std::lock_guard lock(m_mutex);
  if (--m_active == 0) m_changed.notify_all();
}

std::uint64_t RecoveringDatabase::resets() const {
  std::lock_guard lock(m_mutex);
  return m_resets;
}

std::uint64_t RecoveringDatabase::reopens() const {
  std::lock_guard lock(m_mutex);
  return m_reopens;
}

void RecoveringDatabase::check_files() {
  std::shared_ptr<const DatabaseFiles> files;
  std::uint64_t generation = 0;
  {
    std::lock_guard lock(m_mutex);
    if (m_swapping || !m_database) return;
    files = m_database->files;
    generation = m_generation;
  }
  if (auto change = files->changed())
    swap(generation, SwapKind::files_lost, common::make_error(ErrorCode::io, *change));
}

void RecoveringDatabase::swap(std::uint64_t generation, SwapKind kind, const common::Error& cause) {
  std::unique_ptr<StoreDatabase> old;
  {
    std::unique_lock lock(m_mutex);
    // Another call already replaced the database this one failed on, or is doing so now.
    if (generation != m_generation || m_swapping) return;
    m_swapping = true;
    m_changed.wait(lock, [this] { return m_active == 0; });
    old = std::move(m_database);
  }
  // The gate is closed and empty: nothing else touches a database until it reopens.
  if (old) {
    if (kind == SwapKind::files_lost) old->leave_files_at_close();
    old.reset();  // closes the writer and every reader of the old file
  }
  Result<std::unique_ptr<StoreDatabase>> fresh = std::unique_ptr<StoreDatabase>();
  if (kind == SwapKind::corrupt) {
    fresh = open_fresh(m_options, cause);
    if (!fresh) spdlog::error("store: could not replace the corrupt database: {}", fresh.error().message);
  } else {
    std::error_code ec;
    const bool there = std::filesystem::exists(m_options.path, ec);
    spdlog::error(
        "store: {} while jitcached was running: what was written since went to files that are no "
        "longer at their paths, and is lost; the store is reopened on {} (docs/operations.md "
        "\"The state directory\")",
        cause.message,
        there ? "the database now at " + m_options.path.string()
              : "a new, empty database at " + m_options.path.string());
    fresh = open_at_path(m_options);
    if (!fresh) spdlog::error("store: could not reopen the database: {}", fresh.error().message);
  }
  {
    std::lock_guard lock(m_mutex);
    if (fresh) m_database = std::move(*fresh);
  }
  // The gate is still closed: nothing reads what the store drops here.
  if (m_hooks.replaced) m_hooks.replaced();
  {
    std::lock_guard lock(m_mutex);
    ++(kind == SwapKind::corrupt ? m_resets : m_reopens);
    ++m_generation;
    m_swapping = false;
  }
  m_changed.notify_all();
  // Rationale: after the gate has reopened, because the store's row listener (the publisher) may
  // hold its own lock while it waits in the gate to ask the store about a row; told inside, both
  // would wait.
  if (m_hooks.reopened) m_hooks.reopened();
}

}  // namespace jitcache::daemon::store
