#include <daemon/compile/compile_outcome.hpp>

#include <utility>

namespace jitcache::daemon::compile {

std::string_view refusal_reason_name(RefusalReason reason) {
  switch (reason) {
    case RefusalReason::option: return "option";
    case RefusalReason::ptx_version: return "ptx_version";
    case RefusalReason::arch: return "arch";
    case RefusalReason::driver_too_old: return "driver_too_old";
    case RefusalReason::unknown_toolkit: return "unknown_toolkit";
    case RefusalReason::linker: return "linker";
    case RefusalReason::nvrtc: return "nvrtc";
  }
  return "unknown";
}

std::string_view outcome_kind_name(OutcomeKind kind) {
  switch (kind) {
    case OutcomeKind::compiled: return "compiled";
    case OutcomeKind::compile_error: return "compile_error";
    case OutcomeKind::refused: return "refused";
    case OutcomeKind::worker_failed: return "worker_failed";
    case OutcomeKind::busy: return "busy";
  }
  return "unknown";
}

std::string_view worker_failure_name(WorkerFailure failure) {
  switch (failure) {
    case WorkerFailure::none: return "none";
    case WorkerFailure::spawn: return "spawn";
    case WorkerFailure::crashed: return "crashed";
    case WorkerFailure::wall_time: return "wall_time";
    case WorkerFailure::cpu_time: return "cpu_time";
    case WorkerFailure::memory: return "memory";
    case WorkerFailure::protocol: return "protocol";
    case WorkerFailure::cancelled: return "cancelled";
  }
  return "unknown";
}

CompileOutcome CompileOutcome::make_refused(Refusal refusal) {
  CompileOutcome outcome;
  outcome.kind = OutcomeKind::refused;
  outcome.refusal = refusal.reason;
  outcome.message = std::move(refusal.message);
  return outcome;
}

CompileOutcome CompileOutcome::make_worker_failed(WorkerFailure failure, std::string message) {
  CompileOutcome outcome;
  outcome.kind = OutcomeKind::worker_failed;
  outcome.failure = failure;
  outcome.message = std::move(message);
  return outcome;
}

CompileOutcome CompileOutcome::make_busy(std::string message) {
  CompileOutcome outcome;
  outcome.kind = OutcomeKind::busy;
  outcome.message = std::move(message);
  return outcome;
}

}  // namespace jitcache::daemon::compile
