// CompileGate: what may stand between a compile flight and its worker — the fleet's single flight
// (daemon/remote/fleet_gate.hpp): before a host compiles a key it asks the fleet whether another
// host is compiling it, and waits for that host's entry instead. The compile service calls it on
// the compile thread that would run the compile, once per flight (so once per key per host).
// Thread safety: both methods are called from several compile threads at once.
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include <proto/digest.hpp>

#include <daemon/compile/compile_outcome.hpp>

namespace jitcache::daemon::compile {

// The compile a gate is asked about: its key id, the key's fields but the content digest (a gate
// that needs it hashes `ptx`: the exact bytes the digest covers), and its PTX. A consumer of a
// fleet hands these to a builder, which compiles the key for it (docs/remote-layout.md "Asks").
// Views into the flight, valid during the call only.
struct GateSubject {
  // A compile known by its key id alone (a link, a test): no source a gate could pass on.
  GateSubject(const proto::Digest256& id) : key_id(id) {}  // NOLINT(google-explicit-constructor)

  proto::Digest256 key_id;
  std::string_view arch;
  std::uint32_t driver_api = 0;
  std::string_view driver_build;
  std::string_view options;             // canonical (proto/jit_options.hpp)
  std::span<const std::uint8_t> ptx{};  // empty: a link, or nothing to pass on
};

class CompileGate {
 public:
  virtual ~CompileGate() = default;
  // Blocks (at most as long as a compile may take, and returning promptly once `stop` is true)
  // until this host should compile the key (nullopt) or the entry was found elsewhere: a
  // `compiled` outcome with from_elsewhere set, already stored, which the service hands to the
  // waiters without compiling and without the store sink.
  virtual std::optional<CompileOutcome> before_compile(const GateSubject& subject, const std::atomic<bool>& stop) = 0;
  // After this host's compile of the key, whatever its outcome (not called for an outcome
  // before_compile returned).
  virtual void after_compile(const proto::Digest256& key_id, const CompileOutcome& outcome) = 0;
};

}  // namespace jitcache::daemon::compile
