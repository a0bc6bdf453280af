// The runner's side of a worker's pipes: feed it its input, collect its stdout and the start of its
// stderr, and wait for it to exit, all within one deadline. Feeding and collecting are interleaved
// (poll), so a worker that writes before it has read everything cannot deadlock the daemon.
// Thread safety: one call per WorkerProcess.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include <proto/digest.hpp>

#include <daemon/compile/worker_process.hpp>

namespace jitcache::daemon::compile {

struct Exchange {
  enum class End {
    exited,    // the worker exited (status is valid) and closed its pipes
    deadline,  // killed at the deadline
    stopped,   // killed because *stop became true
    overflow,  // killed for writing more than max_stdout bytes
    failed,    // poll itself failed; killed
  };
  End end = End::exited;
  ExitStatus status;  // valid for every End: the worker is always reaped
  std::vector<std::uint8_t> stdout_bytes;
  std::string stderr_head;  // the first few KiB of stderr, for messages
};

Exchange exchange(WorkerProcess& process, proto::Bytes input, std::chrono::steady_clock::time_point deadline,
                  const std::atomic<bool>& stop, std::size_t max_stdout);

}  // namespace jitcache::daemon::compile
