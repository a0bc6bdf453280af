// AskDesk: a consumer's miss becomes one compile in the fleet (docs/operations.md "A fleet",
// docs/remote-layout.md "Asks"). A consumer cannot upload what it compiles, so a herd of consumers
// for a key no builder was asked for would compile once per host. Instead:
//   - a consumer that misses while a builder is up asks the builders to compile the key for it
//     (ask): the key's fields and the PTX go under `ask/<key id>` (SET NX, so the first consumer of
//     a herd asks and the others find it asked; it expires after k_ask_life), and a short note on
//     the `fleet/asks` queue tells the builders. The consumers then wait for a builder's lease and
//     entry as on any miss (fleet_gate.hpp);
//   - every builder takes notes off the queue every k_tick, reads the ask, refuses one that fails a
//     check (too long, malformed, a key that is not the note's, a PTX whose digest is not the key's),
//     skips a key it holds already (the wants queue heals those: healer.hpp) or whose lease another
//     host holds, and otherwise takes the key's lease and submits the compile to its own compile
//     service, as a compile of the pseudo-tenant k_ask_tenant (its per-tenant limits bound what asks
//     may hold, and one compile slot always stays for local clients). The compile runs with its
//     refusal checks, workers and limits, is stored in the shared namespace and uploaded signed,
//     and the upload releases the lease: the path of every compile of a builder.
// What an ask can cost a builder is bounded: notes looked at per round (k_max_notes_per_round),
// asks of its own in flight (k_max_in_flight), one take of a key per k_ask_life, one ask value of
// k_max_compile_ask_bytes at most.
// Thread safety: ask() from any compile thread; serve() once, before the first ask is taken; the
// builder's thread is the object's own.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>

#include <daemon/compile/compile_gate.hpp>
#include <daemon/compile/compile_service.hpp>
#include <daemon/remote/remote_tier.hpp>
#include <daemon/store/store.hpp>

namespace jitcache::daemon::remote {

// Who the compile service charges for the compiles builders run on consumers' asks: no uid a peer
// can have ((uid_t)-1 is "no uid" to POSIX), so asks share one tenant's limits.
inline constexpr std::uint32_t k_ask_tenant = 0xFFFF'FFFFu;

// The compile service's store sink registers each key before its compile (the sink files the
// image under it: daemon/compile_store/compile_store_sink.hpp); the desk registers an ask's key the same
// way, through these.
struct AskSinkRegistry {
  std::function<void(const proto::Digest256& key_id, const proto::KeyFields& key, const proto::Checksum128& fast)>
      expect;
  std::function<void(const proto::Digest256& key_id)> release;
};

class AskDesk {
 public:
  // `local`: this host's local store (never the tiered one).
  AskDesk(RemoteTier& tier, store::Store& local);
  ~AskDesk();
  AskDesk(const AskDesk&) = delete;
  AskDesk& operator=(const AskDesk&) = delete;

  // A builder takes asks from now on and compiles them with `service` (kept alive until this
  // object is destroyed). Nothing on a consumer.
  void serve(compile::CompileService& service, AskSinkRegistry registry);
  // No ask is taken from now on (the compile service is about to go); the compiles already
  // submitted end with the service, whose handlers still reach this object.
  void stop_serving();

  // A consumer asks the builders to compile `subject` for it. True when the key is asked for now
  // (by this call, or by another host within k_ask_life); false when this host cannot ask (a
  // builder, a link, an ask too long, an ACL without the queue, a remote that does not answer).
  bool ask(const compile::GateSubject& subject);

 private:
  void loop();
  void take_asks(RemoteEndpoint& remote);
  void take(RemoteEndpoint& remote, const proto::Digest256& key_id);
  void log_refusal(RemoteEndpoint& remote, const std::string& id, const std::string& why);
  void finished(const proto::Digest256& key_id, const compile::CompileOutcome& outcome);
  bool held_locally(const proto::Digest256& key_id);
  RemoteEndpoint* queue_remote();
  void refused_by_remote(const common::Error& error, std::string_view what);

  RemoteTier& m_tier;
  store::Store& m_local;
  compile::CompileService* m_service = nullptr;
  AskSinkRegistry m_registry;
  std::mutex m_mutex;
  std::condition_variable m_wake;
  std::map<proto::Digest256, Clock::time_point> m_recent;  // under m_mutex: asked (consumer) or taken (builder)
  unsigned m_in_flight = 0;                                // under m_mutex: the builder's ask compiles
  bool m_stopping = false;
  std::atomic<bool> m_queue_refused{false};  // the remote keeps no asks for this host (ACL, HTTP)
  Clock::time_point m_quiet_until{};         // the builder's thread only: the next refusal warned about
  std::thread m_thread;
};

}  // namespace jitcache::daemon::remote
