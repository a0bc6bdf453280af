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
    // With Until::output_closed: the worker closed stdout and stderr and has not exited yet; status
    // is not valid and the worker is not reaped (the caller finishes it: finish_exchange, or reaps
    // it later).
    output_closed,
  };
  End end = End::exited;
  ExitStatus status;  // valid for every End but output_closed: the worker is then reaped
  std::vector<std::uint8_t> stdout_bytes;
  std::string stderr_head;  // the first few KiB of stderr, for messages
};

// What ends an exchange that goes well: the worker's exit (and its pipes' EOF), or already the EOF
// of both its output pipes (a worker closes them once its reply is whole: compile_worker_main.cpp).
enum class Until { exited, output_closed };

Exchange exchange(WorkerProcess& process, proto::Bytes input, std::chrono::steady_clock::time_point deadline,
                  const std::atomic<bool>& stop, std::size_t max_stdout, Until until = Until::exited);

// Waits, within the same deadline and stop, for the exit of a worker an exchange left at
// output_closed, and reaps it: `exchanged` then reads as if exchange() had waited for the exit.
void finish_exchange(WorkerProcess& process, Exchange& exchanged, std::chrono::steady_clock::time_point deadline,
                     const std::atomic<bool>& stop);

}  // namespace jitcache::daemon::compile
