#include <daemon/remote/ask_desk.hpp>

#include <algorithm>
#include <optional>
#include <variant>

#include <spdlog/spdlog.h>

#include <proto/content_digest.hpp>

#include <daemon/remote/compile_ask.hpp>
#include <daemon/remote/remote_names.hpp>

namespace jitcache::daemon::remote {

namespace {

using namespace std::chrono_literals;

// Rationale: an ask reaches a builder within one tick, and its lease appears a few milliseconds
// later, well inside remote_builder_wait (2 s), for which the herd's other consumers wait for a
// lease; as for the wants queue, an LPOP per tick per builder is nothing to a Redis.
constexpr auto k_tick = 100ms;
// How long an ask lives in the remote, and how long a key asked for (by a consumer) or taken (by a
// builder) is not asked for or taken again: a herd's consumers make one ask, a consumer that
// misses in a loop one ask per k_ask_life, and a key whose compile a builder could not start is
// compiled by its consumers after their wait rather than asked for again at once.
constexpr auto k_ask_life = 10s;
// The asks queue keeps the newest this many notes (each 66 bytes: the ask itself is under ask/).
constexpr std::size_t k_max_queued_asks = 1024;
// A note: "k <key id hex>".
constexpr std::size_t k_note_bytes = 2 + 64;
// Notes taken off the queue per round at most, asks or junk: a flood of notes cannot hold the
// builder's thread, and one round reads at most this many asks of k_max_compile_ask_bytes.
constexpr unsigned k_max_notes_per_round = 16;
// Keys remembered at most; forgetting costs one more ask or take each.
constexpr std::size_t k_max_remembered = 4096;

// Whether `id` was asked for or taken within k_ask_life; remembers it from now if not.
bool recently(std::map<proto::Digest256, Clock::time_point>& memo, const proto::Digest256& id) {
  const auto now = Clock::now();
  if (memo.size() >= k_max_remembered) {
    std::erase_if(memo, [&](const auto& entry) { return entry.second < now; });
    if (memo.size() >= k_max_remembered) memo.clear();
  }
  const auto [it, inserted] = memo.try_emplace(id, now + k_ask_life);
  if (inserted) return false;
  if (it->second > now) return true;
  it->second = now + k_ask_life;
  return false;
}

}  // namespace

AskDesk::AskDesk(RemoteTier& tier, store::Store& local) : m_tier(tier), m_local(local) {}

AskDesk::~AskDesk() { stop_serving(); }

void AskDesk::stop_serving() {
  {
    std::lock_guard lock(m_mutex);
    m_stopping = true;
  }
  m_wake.notify_all();
  if (m_thread.joinable()) m_thread.join();
}

void AskDesk::serve(compile::CompileService& service, AskSinkRegistry registry) {
  if (!m_tier.uploads() || m_thread.joinable()) return;
  m_service = &service;
  m_registry = std::move(registry);
  m_thread = std::thread([this] { loop(); });
}

// The first remote that holds leases: where the builders look for asks, as for leases and wants.
RemoteEndpoint* AskDesk::queue_remote() {
  for (std::size_t i = 0; i < m_tier.remote_count(); ++i) {
    RemoteEndpoint& remote = m_tier.remote(i);
    if (!remote.leases_unsupported.load(std::memory_order_relaxed)) return &remote;
  }
  return nullptr;
}

// An ACL written before asks (no +set on ask:*, no +rpush on fleet:{asks}), or a server without
// queues: warned about once and not tried again, so it costs the breaker nothing.
void AskDesk::refused_by_remote(const common::Error& error, std::string_view what) {
  if (error.code != common::ErrorCode::unsupported && error.code != common::ErrorCode::forbidden) return;
  if (m_queue_refused.exchange(true)) return;
  if (error.code == common::ErrorCode::forbidden) {
    spdlog::warn(
        "remote tier: {}; this host {} from now on (its consumers compile a key no builder was asked for "
        "themselves): docs/remote-layout.md \"Commands\" has the ACL",
        error.message, what);
  }
}

bool AskDesk::ask(const compile::GateSubject& subject) {
  if (m_tier.uploads() || subject.ptx.empty() || m_queue_refused.load(std::memory_order_relaxed)) return false;
  {
    std::lock_guard lock(m_mutex);
    if (recently(m_recent, subject.key_id)) return true;
  }
  RemoteEndpoint* remote = queue_remote();
  if (remote == nullptr || !remote->backend->keeps_queues()) return false;
  proto::KeyFields key;
  key.content = proto::content_digest(proto::Bytes(subject.ptx));
  key.arch = subject.arch;
  key.driver_api = subject.driver_api;
  key.driver_build = subject.driver_build;
  key.options = subject.options;
  if (!(proto::key_id(key) == subject.key_id)) return false;  // not a PTX compile's subject
  const std::string value = encode_compile_ask(key, proto::Bytes(subject.ptx));
  if (value.empty()) {
    spdlog::debug("key_id={}: its ask would be longer than {} bytes: not asked", hex_id(subject.key_id),
                  k_max_compile_ask_bytes);
    return false;
  }
  const std::string id = hex_id(subject.key_id);
  const Deadline deadline = Clock::now() + m_tier.lease_call_timeout();
  auto placed = m_tier.call<bool>(*remote, [&](RemoteBackend& b) {
    return b.put_if_absent({k_space_ask, id}, value, std::chrono::duration_cast<std::chrono::milliseconds>(k_ask_life),
                           deadline);
  });
  if (!placed) {
    refused_by_remote(placed.error(), "asks builders to compile nothing");
    return false;
  }
  if (!*placed) return true;  // another consumer of the herd asked first
  auto noted = m_tier.call<void>(*remote, [&](RemoteBackend& b) {
    return b.append({k_space_fleet, k_fleet_asks}, "k " + id, k_max_queued_asks, deadline);
  });
  if (!noted) {
    refused_by_remote(noted.error(), "asks builders to compile nothing");
    return false;
  }
  RemoteCounters::add(remote->counters.asks_sent);
  spdlog::debug("key_id={}: asked the builders to compile it", id);
  return true;
}

void AskDesk::loop() {
  std::unique_lock lock(m_mutex);
  while (!m_stopping) {
    m_wake.wait_for(lock, k_tick, [&] { return m_stopping; });
    if (m_stopping) return;
    lock.unlock();
    RemoteEndpoint* remote = queue_remote();
    if (remote != nullptr && remote->backend->keeps_queues() && !m_queue_refused.load()) take_asks(*remote);
    lock.lock();
  }
}

void AskDesk::take_asks(RemoteEndpoint& remote) {
  const unsigned max_in_flight = std::max(1u, m_service->max_concurrent());
  for (unsigned looked_at = 0; looked_at < k_max_notes_per_round; ++looked_at) {
    {
      std::lock_guard lock(m_mutex);
      // Left on the queue for another builder, or for this one's next round.
      if (m_in_flight >= max_in_flight || m_stopping) return;
    }
    const Deadline deadline = Clock::now() + m_tier.lease_call_timeout();
    auto taken = m_tier.call<std::optional<std::string>>(remote, [&](RemoteBackend& b) {
      return b.take_first({k_space_fleet, k_fleet_asks}, k_note_bytes, deadline);
    });
    if (!taken && taken.error().code == common::ErrorCode::too_large) {
      RemoteCounters::add(remote.counters.asks_refused);  // not a note of ours
      continue;
    }
    if (!taken) refused_by_remote(taken.error(), "takes no compile asks");
    if (!taken || !*taken) return;
    const std::string& note = **taken;
    auto id = note.size() == k_note_bytes && note.starts_with("k ")
                  ? proto::digest_from_hex(std::string_view(note).substr(2))
                  : std::nullopt;
    if (!id) {
      RemoteCounters::add(remote.counters.asks_refused);
      continue;
    }
    take(remote, *id);
  }
}

bool AskDesk::held_locally(const proto::Digest256& key_id) {
  auto found = m_local.lookup(store::Selector::key_id(key_id), store::Visibility{store::k_shared_namespace, false});
  return found && store::is_hit(*found) && std::get<store::Hit>(*found).info.namespace_id == store::k_shared_namespace;
}

// Rationale: whoever can write the queue can make refusals by the dozen; one line per k_ask_life
// says that it happens and why, the counter says how often.
void AskDesk::log_refusal(RemoteEndpoint& remote, const std::string& id, const std::string& why) {
  const auto now = Clock::now();
  if (now < m_quiet_until) {
    spdlog::debug("remote {}: refused the compile ask of key_id={}: {}", remote.backend->name(), id, why);
    return;
  }
  m_quiet_until = now + k_ask_life;
  spdlog::warn(
      "remote {}: refused the compile ask of key_id={}: {} (further refusals for {} s are counted in "
      "asks_refused only)",
      remote.backend->name(), id, why, std::chrono::duration_cast<std::chrono::seconds>(k_ask_life).count());
}

void AskDesk::take(RemoteEndpoint& remote, const proto::Digest256& key_id) {
  const std::string id = hex_id(key_id);
  auto skip = [&](std::string_view why) {
    RemoteCounters::add(remote.counters.asks_skipped);
    spdlog::debug("key_id={}: ask left: {}", id, why);
  };
  {
    std::lock_guard lock(m_mutex);
    if (recently(m_recent, key_id)) return skip("taken already");
  }
  // Held here: uploaded again through the wants queue the same miss filled (healer.hpp).
  if (held_locally(key_id)) return skip("held here");
  const Deadline deadline = Clock::now() + m_tier.lease_call_timeout();
  auto value = m_tier.call<std::optional<std::string>>(remote, [&](RemoteBackend& b) {
    return b.get({k_space_ask, id}, k_max_compile_ask_bytes, deadline);
  });
  std::string refusal;
  if (!value && (value.error().code == common::ErrorCode::too_large ||
                 value.error().code == common::ErrorCode::invalid_argument)) {
    refusal = value.error().message;
  } else if (!value) {
    return skip(value.error().message);
  } else if (!*value) {
    return skip("expired");
  }
  std::optional<CompileAsk> ask;
  if (refusal.empty()) {
    auto decoded = decode_compile_ask(**value, m_tier.settings().max_source);
    if (auto* why = std::get_if<std::string>(&decoded)) {
      refusal = std::move(*why);
    } else if (!(proto::key_id(std::get<CompileAsk>(decoded).key) == key_id)) {
      refusal = "it names another key than its note";
    } else {
      ask = std::move(std::get<CompileAsk>(decoded));
    }
  }
  if (!ask) {
    RemoteCounters::add(remote.counters.asks_refused);
    log_refusal(remote, id, refusal);
    return;
  }
  // One holder for the fleet from now on: the herd's consumers see this lease and wait for its
  // entry; a builder that misses the key meanwhile waits too, or joins this compile here.
  const LeaseAnswer lease = m_tier.take_lease(key_id);
  if (lease.take != LeaseTake::won) return skip("its lease is held, or cannot be taken now");
  {
    std::lock_guard lock(m_mutex);
    ++m_in_flight;
  }
  RemoteCounters::add(remote.counters.asks_taken);
  spdlog::info("remote {}: compiling key_id={} on a consumer's ask", remote.backend->name(), id);
  m_registry.expect(key_id, ask->key, proto::xxh3_128(proto::Bytes(ask->ptx)));
  compile::CompileInput input;
  input.arch = ask->key.arch;
  input.driver_api = ask->key.driver_api;
  input.driver_build = ask->key.driver_build;
  input.options = ask->key.options;
  input.ptx = ask->ptx;
  auto ticket = m_service->submit(
      key_id, input, compile::Priority::interactive,
      [this, key_id](compile::CompileOutcomePtr outcome) { finished(key_id, *outcome); }, k_ask_tenant);
  if (!ticket) {
    spdlog::warn("remote {}: the compile ask of key_id={}: {}", remote.backend->name(), id, ticket.error().message);
    finished(key_id, compile::CompileOutcome::make_busy(ticket.error().message));
  }
}

void AskDesk::finished(const proto::Digest256& key_id, const compile::CompileOutcome& outcome) {
  m_registry.release(key_id);
  // A compile of this host's releases its lease once uploaded (remote_tier.cpp); anything else (a
  // refusal to compile what this host cannot compile faithfully, busy, a failure, an entry found
  // elsewhere) frees the key now, and the waiting consumers compile it themselves.
  if (outcome.kind != compile::OutcomeKind::compiled || outcome.from_elsewhere) m_tier.release_lease(key_id);
  if (outcome.kind == compile::OutcomeKind::refused || outcome.kind == compile::OutcomeKind::busy) {
    spdlog::info("key_id={}: not compiled on the ask: {}", hex_id(key_id), outcome.message);
  }
  std::lock_guard lock(m_mutex);
  --m_in_flight;
}

}  // namespace jitcache::daemon::remote
