// Loads through libjitcache as a program would, and what the GPU tests ask of the cache around a
// load: the load's own record, the process's counters, the daemon's STATS.
// Thread safety: as libjitcache (the load record is the calling thread's).
#pragma once

#include <cstdint>
#include <string>

#include <jitcache/jitcache.hpp>

#include <tests/support/daemon_process.hpp>

namespace jitcache::testing::gpu {

struct CacheLoad {
  CUresult result = CUDA_ERROR_UNKNOWN;
  jitcache::Module module;  // unloaded when the CacheLoad goes
  jitcache_load_info info{};

  std::string outcome() const { return jitcache_outcome_name(info.outcome); }
  // One line for assertion messages: outcome, result, stage, key arch and the load's reason.
  std::string describe() const;
};

// jitcache_module_load_data(image) and its jitcache_last_load_info().
CacheLoad load_through_cache(const void* image);

// Points libjitcache at `socket` (quietly), which also resets its counters and connections.
void use_daemon(const std::string& socket);

jitcache_counters client_counters();

// The daemon's STATS value `name`; throws when STATS fails or has no such name.
std::uint64_t daemon_stat(const DaemonProcess& daemon, const std::string& name);

// What a miss becomes with this daemon: "compiled_by_daemon" when it offers COMPILE (HELLO
// capability bit 1, PROTOCOL.md), else "compiled_locally".
std::string expected_miss_outcome(const DaemonProcess& daemon);

}  // namespace jitcache::testing::gpu
