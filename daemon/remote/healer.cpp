#include <daemon/remote/healer.hpp>

#include <spdlog/spdlog.h>

#include <daemon/remote/record/index_record_codec.hpp>
#include <daemon/remote/remote_names.hpp>

namespace jitcache::daemon::remote {

namespace {

using namespace std::chrono_literals;

// Rationale: a want reaches the builders within one tick of being sent, so a fleet whose remote
// came back empty is whole again within about 0.1 s of the first consumer that asks, plus the
// uploads (docs/operations.md "A fleet"); an LPOP per tick per builder is nothing to a Redis.
constexpr auto k_tick = 100ms;
// A key asked for, or checked, once is not asked for or checked again for this long: a consumer
// that misses the same key in a loop costs the fleet one note, a hot key one check.
constexpr auto k_want_memo = 10s;
constexpr auto k_check_memo = 10min;
// The offers waiting at most; more are dropped (a later hit or miss offers them again).
constexpr std::size_t k_max_pending = 1024;
// The wants queue in the remote keeps the newest this many notes.
constexpr std::size_t k_max_queued_wants = 4096;
// A note: "k <key id hex>" or "f <fast key id hex>".
constexpr std::size_t k_note_bytes = 2 + 64;
// Values taken from the wants queue per round at most, notes or junk.
constexpr unsigned k_max_values_per_round = 64;

}  // namespace

Healer::Healer(RemoteTier& tier, store::Store& local, unsigned rate) : m_tier(tier), m_local(local), m_rate(rate) {
  if (m_rate > 0 && m_tier.remote_count() > 0) m_thread = std::thread([this] { loop(); });
}

Healer::~Healer() {
  {
    std::lock_guard lock(m_mutex);
    m_stopping = true;
  }
  m_wake.notify_all();
  if (m_thread.joinable()) m_thread.join();
}

Healer::Note Healer::note_of(const store::Selector& selector) {
  return Note{selector.kind() == store::Selector::Kind::fast_key_id, selector.id()};
}

void Healer::offer_hit(const store::Selector& selector) {
  if (!m_thread.joinable() || !m_tier.uploads() || selector.kind() == store::Selector::Kind::key_id_prefix) return;
  std::lock_guard lock(m_mutex);
  if (m_hits.size() >= k_max_pending || remembered(m_offered, selector.id(), k_check_memo)) return;
  m_hits.push_back(note_of(selector));
}

void Healer::offer_miss(const store::Selector& selector) {
  if (!m_thread.joinable() || m_tier.uploads() || selector.kind() == store::Selector::Kind::key_id_prefix) return;
  {
    std::lock_guard lock(m_mutex);
    if (m_wants.size() >= k_max_pending || remembered(m_offered, selector.id(), k_want_memo)) return;
    m_wants.push_back(note_of(selector));
  }
  m_wake.notify_one();
}

bool Healer::remembered(std::map<proto::Digest256, Clock::time_point>& memo, const proto::Digest256& id,
                        Clock::duration for_how_long) {
  const auto now = Clock::now();
  if (memo.size() >= 4 * k_max_pending) {
    std::erase_if(memo, [&](const auto& entry) { return entry.second < now; });
    if (memo.size() >= 4 * k_max_pending) memo.clear();  // forgetting costs one more check each
  }
  const auto [it, inserted] = memo.try_emplace(id, now + for_how_long);
  if (inserted) return false;
  if (it->second > now) return true;
  it->second = now + for_how_long;
  return false;
}

void Healer::loop() {
  std::unique_lock lock(m_mutex);
  while (!m_stopping) {
    m_wake.wait_for(lock, k_tick, [&] { return m_stopping || !m_wants.empty(); });
    if (m_stopping) return;
    std::deque<Note> wants = std::exchange(m_wants, {});
    std::deque<Note> hits = std::exchange(m_hits, {});
    lock.unlock();
    if (!wants.empty()) send_wants(wants);
    if (m_tier.uploads()) {
      unsigned budget = std::max(1u, m_rate / 10);  // per tick
      take_wants(budget);
      for (const Note& hit : hits) {
        if (budget == 0) break;  // dropped: checked again at a later hit, k_check_memo on
        if (heal(hit, /*unless_usable=*/true)) --budget;
      }
    }
    lock.lock();
  }
}

// A queue the remote cannot keep (HTTP), or an ACL that predates it: not asked again, so an old
// ACL costs the breaker nothing (docs/remote-layout.md "Wants").
void Healer::refused(const common::Error& error, std::string_view what, std::string_view commands) {
  if (error.code != common::ErrorCode::unsupported && error.code != common::ErrorCode::forbidden) return;
  if (m_queue_refused.exchange(true)) return;
  if (error.code == common::ErrorCode::forbidden) {
    spdlog::warn(
        "remote tier: {}; this host {} from now on: allow {} on the wants queue (docs/remote-layout.md "
        "\"Commands\")",
        error.message, what, commands);
  }
}

void Healer::send_wants(std::deque<Note>& wants) {
  if (m_queue_refused.load(std::memory_order_relaxed)) return;
  for (std::size_t i = 0; i < m_tier.remote_count(); ++i) {
    RemoteEndpoint& remote = m_tier.remote(i);
    if (remote.leases_unsupported.load(std::memory_order_relaxed)) continue;
    const Deadline deadline = Clock::now() + m_tier.lease_call_timeout();
    for (const Note& note : wants) {
      const std::string value = std::string(note.fast ? "f " : "k ") + hex_id(note.id);
      auto sent = m_tier.call<void>(remote, [&](RemoteBackend& b) {
        return b.append({k_space_fleet, k_fleet_wants}, value, k_max_queued_wants, deadline);
      });
      if (!sent) {
        refused(sent.error(), "asks builders for nothing", "+rpush +ltrim");
        return;  // or the remote is unwell: the next miss asks again
      }
      RemoteCounters::add(remote.counters.wants_sent);
    }
    return;  // one remote: the one the builders watch (the first that holds leases)
  }
}

void Healer::take_wants(unsigned& budget) {
  if (m_queue_refused.load(std::memory_order_relaxed)) return;
  for (std::size_t i = 0; i < m_tier.remote_count() && budget > 0; ++i) {
    RemoteEndpoint& remote = m_tier.remote(i);
    if (remote.leases_unsupported.load(std::memory_order_relaxed)) continue;
    // Rationale: a consumer can push anything onto the queue; a value that is not a note (too long,
    // malformed) is dropped and the round goes on, so junk cannot starve real requests; the number
    // of values looked at per round is bounded all the same, so a flood cannot hold this thread.
    unsigned looked_at = 0;
    while (budget > 0 && looked_at++ < k_max_values_per_round) {
      const Deadline deadline = Clock::now() + m_tier.lease_call_timeout();
      auto taken = m_tier.call<std::optional<std::string>>(remote, [&](RemoteBackend& b) {
        return b.take_first({k_space_fleet, k_fleet_wants}, k_note_bytes, deadline);
      });
      if (!taken && taken.error().code == common::ErrorCode::too_large) continue;  // not a note of ours
      if (!taken) refused(taken.error(), "takes no heal requests", "+lpop");
      if (!taken || !*taken) break;
      const std::string& text = **taken;
      auto id = text.size() == k_note_bytes ? proto::digest_from_hex(std::string_view(text).substr(2)) : std::nullopt;
      if (!id || (text[0] != 'k' && text[0] != 'f') || text[1] != ' ') continue;  // not a note of ours
      const Note note{text[0] == 'f', *id};
      const auto healed = m_healed.find(note.id);
      if (healed != m_healed.end() && healed->second > Clock::now()) continue;  // consumers asking at once
      // Rationale: uploaded whether or not the record there verifies: a consumer asks because what
      // it read was unusable (a damaged image object behind a good record included). What a note can
      // buy is bounded: one upload per key per k_want_memo, remote_heal_rate uploads a second, and
      // only of entries this builder holds (docs/remote-layout.md "Wants").
      if (heal(note, /*unless_usable=*/false)) {
        (void)remembered(m_healed, note.id, k_want_memo);
        RemoteCounters::add(remote.counters.heals);
        --budget;
      }
    }
    return;
  }
}

bool Healer::heal(const Note& note, bool unless_usable) {
  const store::Selector selector = note.fast ? store::Selector::fast_key_id(note.id) : store::Selector::key_id(note.id);
  auto found = m_local.lookup(selector, store::Visibility{store::k_shared_namespace, false});
  if (!found || !store::is_hit(*found)) return false;
  store::Hit& hit = std::get<store::Hit>(*found);
  if (hit.info.namespace_id != store::k_shared_namespace) return false;
  if (unless_usable && remote_usable(hit)) return false;
  Upload upload;
  upload.record.key = hit.info.key;
  upload.record.content_fast = hit.content_fast;
  upload.record.producer = hit.info.producer;
  upload.record.compile_time_us = hit.info.compile_time_us;
  upload.image.assign(hit.image->begin(), hit.image->end());
  spdlog::info("remote tier: key_id={} is missing or unusable in the remote: uploading it again",
               proto::to_hex(hit.info.key_id));
  m_tier.upload(std::move(upload));
  if (unless_usable) {
    for (std::size_t i = 0; i < m_tier.remote_count(); ++i) RemoteCounters::add(m_tier.remote(i).counters.heals);
  }
  return true;
}

// Whether every remote has a record of the key signed by this host's key (a record under an old
// key, after a rotation, is replaced) that verifies.
bool Healer::remote_usable(const store::Hit& hit) {
  const Deadline deadline = Clock::now() + m_tier.lease_call_timeout();
  const ExpectedKey expected{ExpectedKey::Kind::key_id, hit.info.key_id};
  for (std::size_t i = 0; i < m_tier.remote_count(); ++i) {
    auto bytes = m_tier.call<std::optional<std::string>>(m_tier.remote(i), [&](RemoteBackend& b) {
      return b.get({k_space_index, hex_id(hit.info.key_id)}, k_max_index_record_bytes, deadline);
    });
    if (!bytes) return true;  // cannot tell now: checked again after k_check_memo
    if (!*bytes) return false;
    auto verified = verify_record(**bytes, m_tier.trusted(), expected, m_tier.settings().max_image);
    const auto* record = std::get_if<IndexRecord>(&verified);
    if (record == nullptr || record->signer != m_tier.signing_key()->public_key().id()) return false;
  }
  return true;
}

}  // namespace jitcache::daemon::remote
