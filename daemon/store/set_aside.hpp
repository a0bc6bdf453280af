// Moving a corrupt database out of the way (docs/operations.md "Corruption"): the file and its -wal
// and -shm are renamed to <file>.corrupt-<UTC time stamp>[-wal|-shm], so the damaged store is kept
// for inspection (docs/operations.md) and the next open creates an empty one at the original path.
//
// Rationale: renamed, not copied or deleted. A rename is instant whatever the size, needs no free
// space (a full disk is a likely neighbour of corruption), and keeps the WAL beside its database
// under the name SQLite looks for, so `sqlite3 <moved-aside file>` sees the last commits too.
//
// Thread safety: a free function; the caller makes sure no connection to the file is open.
#pragma once

#include <chrono>
#include <filesystem>

#include <common/result.hpp>

namespace jitcache::daemon::store {

// "20261201T031500Z"
std::string utc_time_stamp(std::chrono::system_clock::time_point when);

// Returns the database's new path. A name already taken (two resets within one second) gets
// "-2", "-3", ... after the time stamp. Errors: io when the database itself cannot be renamed; a
// -wal or -shm that is missing is fine, one that cannot be renamed is removed so that it cannot
// be mistaken for the fresh database's.
common::Result<std::filesystem::path> set_aside_database(const std::filesystem::path& database,
                                                         std::chrono::system_clock::time_point when);

}  // namespace jitcache::daemon::store
