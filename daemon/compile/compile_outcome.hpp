// What a compile request ends in. One outcome is shared, read-only, by every waiter of a compile
// (single flight), so it travels as a shared_ptr to const.
// Thread safety: immutable once built.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <daemon/compile/refusal.hpp>

namespace jitcache::daemon::compile {

// Numbered explicitly: the daemon maps these to wire statuses and counters; never renumber.
enum class OutcomeKind : std::uint8_t {
  compiled = 0,       // image, producer and compile_time_us are set
  compile_error = 1,  // the compiler rejected the PTX; message is its full log
  refused = 2,        // cannot compile faithfully: build it yourself; refusal says why
  worker_failed = 3,  // the worker crashed, hung, ran out of memory or CPU, or wrote garbage
  busy = 4,           // the queue is full (or the service is stopping): try again or build it yourself
};

// How a worker failed, so the daemon can decide whether the failure says something about the PTX
// (remembered in the negative cache) or about the daemon's own state (not remembered).
enum class WorkerFailure : std::uint8_t {
  none = 0,
  spawn = 1,      // fork, pipe or exec failed: the daemon's problem, not the PTX's
  crashed = 2,    // killed by a signal it did not get from us
  wall_time = 3,  // still running at the wall-time limit; killed
  cpu_time = 4,   // over RLIMIT_CPU
  memory = 5,     // over RLIMIT_AS
  protocol = 6,   // exited without a well-formed reply, or with an unexpected status
  cancelled = 7,  // killed because the service is stopping
};

struct CompileOutcome {
  OutcomeKind kind = OutcomeKind::worker_failed;
  std::vector<std::uint8_t> image;    // the cubin (compiled)
  std::string producer;               // "nvJitLink 13.0" (compiled, compile_error)
  std::uint64_t compile_time_us = 0;  // nvJitLink's wall time inside the worker (compiled, compile_error)
  std::string message;  // compile_error: the compiler's log; otherwise a sentence for a log line or a client
  RefusalReason refusal = RefusalReason::option;  // refused only
  WorkerFailure failure = WorkerFailure::none;    // worker_failed only
  bool from_negative_cache = false;               // a remembered failure, served without compiling
  // compiled only: found elsewhere (another host of the fleet compiled it: compile_gate.hpp) and
  // already stored; nothing was compiled here.
  bool from_elsewhere = false;

  static CompileOutcome make_refused(Refusal refusal);
  static CompileOutcome make_worker_failed(WorkerFailure failure, std::string message);
  static CompileOutcome make_busy(std::string message);
};

using CompileOutcomePtr = std::shared_ptr<const CompileOutcome>;

std::string_view outcome_kind_name(OutcomeKind kind);
std::string_view worker_failure_name(WorkerFailure failure);  // "crashed", "wall_time", ...

}  // namespace jitcache::daemon::compile
