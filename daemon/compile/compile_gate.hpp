// CompileGate: what may stand between a compile flight and its worker — the fleet's single flight
// (daemon/remote/fleet_gate.hpp): before a host compiles a key it asks the fleet whether another
// host is compiling it, and waits for that host's entry instead. The compile service calls it on
// the compile thread that would run the compile, once per flight (so once per key per host).
// Thread safety: both methods are called from several compile threads at once.
#pragma once

#include <atomic>
#include <optional>

#include <proto/digest.hpp>

#include <daemon/compile/compile_outcome.hpp>

namespace jitcache::daemon::compile {

class CompileGate {
 public:
  virtual ~CompileGate() = default;
  // Blocks (at most as long as a compile may take, and returning promptly once `stop` is true)
  // until this host should compile the key (nullopt) or the entry was found elsewhere: a
  // `compiled` outcome with from_elsewhere set, already stored, which the service hands to the
  // waiters without compiling and without the store sink.
  virtual std::optional<CompileOutcome> before_compile(const proto::Digest256& key_id,
                                                       const std::atomic<bool>& stop) = 0;
  // After this host's compile of the key, whatever its outcome (not called for an outcome
  // before_compile returned).
  virtual void after_compile(const proto::Digest256& key_id, const CompileOutcome& outcome) = 0;
};

}  // namespace jitcache::daemon::compile
