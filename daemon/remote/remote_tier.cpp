#include <daemon/remote/remote_tier.hpp>

#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <ctime>

#include <spdlog/spdlog.h>

#include <daemon/remote/lease_change.hpp>
#include <daemon/remote/record/image_object.hpp>
#include <daemon/remote/record/index_record_codec.hpp>
#include <daemon/remote/remote_names.hpp>
#include <daemon/remote/source_object.hpp>

namespace jitcache::daemon::remote {

namespace {

// The longest record there can be (docs/remote-layout.md "Index record"): a longer value is not one.
constexpr std::size_t k_max_record_bytes = k_max_index_record_bytes;

std::int64_t unix_ms() {
  timespec now{};
  ::clock_gettime(CLOCK_REALTIME, &now);
  return static_cast<std::int64_t>(now.tv_sec) * 1000 + now.tv_nsec / 1'000'000;
}

// A lease value is "host pid expires_at_ms" (docs/remote-layout.md "Lease"): its expiry, or 0 when
// it does not parse (then it is treated as live: its server's own expiry, or the wait's bound,
// ends it).
std::int64_t lease_expiry(std::string_view value) {
  const std::size_t space = value.rfind(' ');
  if (space == std::string_view::npos) return 0;
  std::int64_t expiry = 0;
  const auto tail = value.substr(space + 1);
  const auto [end, ec] = std::from_chars(tail.data(), tail.data() + tail.size(), expiry);
  return ec == std::errc() && end == tail.data() + tail.size() ? expiry : 0;
}

}  // namespace

bool admit_call(RemoteEndpoint& remote) {
  if (remote.breaker.allow()) return true;
  RemoteCounters::add(remote.counters.skipped);
  return false;
}

void note_call(RemoteEndpoint& remote, Clock::time_point start, const common::Error* error) {
  remote.counters.record_latency(std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - start));
  // A value too long or of the wrong type is the remote answering about one value: the caller
  // counts it as a rejection (docs/remote-layout.md "Checks on read"), not as the remote's error.
  // A pool with no free connection (no_space) is this host's own quota, counted by the backend
  // (redis.pool_waits): the server is not unwell for it.
  const bool about_a_value = error != nullptr && (error->code == common::ErrorCode::too_large ||
                                                  error->code == common::ErrorCode::invalid_argument ||
                                                  error->code == common::ErrorCode::no_space);
  if (error == nullptr || !CircuitBreaker::counts_against(error->code)) {
    if (error != nullptr && !about_a_value) remote.counters.count_error(error->code);
    remote.breaker.succeeded();
    return;
  }
  remote.counters.count_error(error->code);
  if (remote.breaker.failed()) {
    RemoteCounters::add(remote.counters.breaker_opens);
    spdlog::warn("remote {}: {}; skipping it for {} ms", remote.backend->name(), error->message,
                 remote.breaker.open_interval().count());
  }
}

RemoteTier::RemoteTier(TierSettings settings, std::vector<std::unique_ptr<RemoteBackend>> backends, TrustedKeys trusted,
                       std::optional<proto::SigningKey> signing)
    : m_settings(std::move(settings)),
      m_trusted(std::move(trusted)),
      m_signing(std::move(signing)),
      m_queue(m_settings.upload_queue_entries, m_settings.upload_queue_bytes) {
  for (auto& backend : backends) m_remotes.push_back(std::make_unique<RemoteEndpoint>(std::move(backend)));
  m_signer_configured = m_signing && m_trusted.find(m_signing->public_key().id()) != nullptr;
  if (m_signing && !m_signer_configured) {
    std::vector<proto::PublicKey> keys = m_trusted.keys();
    keys.push_back(m_signing->public_key());
    m_trusted = TrustedKeys(std::move(keys));
  }
  if (uploads()) {
    m_uploader = std::thread([this] { upload_loop(); });
    m_renewer = std::thread([this] { renew_loop(); });
  }
}

RemoteTier::~RemoteTier() {
  {
    std::lock_guard lock(m_leases_mutex);
    m_stopping = true;
  }
  m_renew_wake.notify_all();
  if (m_renewer.joinable()) m_renewer.join();
  const std::size_t dropped = m_queue.stop();
  if (m_uploader.joinable()) m_uploader.join();
  if (dropped > 0) {
    for (auto& remote : m_remotes) RemoteCounters::add(remote->counters.upload_drops, dropped);
    spdlog::info("remote tier: {} queued uploads dropped at exit", dropped);
  }
}

std::optional<Fetched> RemoteTier::fetch(const ExpectedKey& expected) {
  const Deadline deadline = Clock::now() + m_settings.timeout;
  const std::string id = hex_id(expected.id);
  const std::string_view space = expected.kind == ExpectedKey::Kind::key_id ? k_space_index : k_space_fast;
  for (std::size_t i = 0; i < m_remotes.size() && Clock::now() < deadline; ++i) {
    RemoteEndpoint& remote = *m_remotes[i];
    auto reject = [&](const Rejected& rejected) {
      remote.counters.count_rejection(rejected.reason);
      if (m_rejection_log.first_time(expected.id)) {
        spdlog::warn("remote {}: not serving {} {}: {} ({})", remote.backend->name(), space, id,
                     rejection_name(rejected.reason), rejected.message);
      }
    };
    RemoteCounters::add(remote.counters.lookups);
    auto record_bytes = call<std::optional<std::string>>(remote, [&](RemoteBackend& b) {
      return b.get({space, id}, k_max_record_bytes, deadline);
    });
    if (!record_bytes) {
      if (record_bytes.error().code == common::ErrorCode::too_large) {
        reject({Rejection::malformed_record, "a record over " + std::to_string(k_max_record_bytes) + " bytes"});
      } else if (record_bytes.error().code == common::ErrorCode::invalid_argument) {
        reject({Rejection::malformed_record, record_bytes.error().message});
      }
      continue;
    }
    if (!*record_bytes) {
      RemoteCounters::add(remote.counters.misses);
      continue;
    }
    RemoteCounters::add(remote.counters.bytes_read, (*record_bytes)->size());
    auto verified = verify_record(**record_bytes, m_trusted, expected, m_settings.max_image);
    if (auto* rejected = std::get_if<Rejected>(&verified)) {
      reject(*rejected);
      continue;
    }
    IndexRecord& record = std::get<IndexRecord>(verified);
    const std::string image_id = hex_id(record.image_digest);
    auto object = call<std::optional<std::string>>(remote, [&](RemoteBackend& b) {
      return b.get({k_space_image, image_id}, static_cast<std::size_t>(record.object_size), deadline);
    });
    if (!object) {
      if (object.error().code == common::ErrorCode::too_large) {
        reject({Rejection::image_mismatch, "the image object is larger than its record says"});
      } else if (object.error().code == common::ErrorCode::invalid_argument) {
        reject({Rejection::image_mismatch, object.error().message});
      }
      continue;
    }
    if (!*object) {
      reject({Rejection::image_missing, "no image " + image_id});
      continue;
    }
    RemoteCounters::add(remote.counters.bytes_read, (*object)->size());
    auto image = decode_image_object(**object, record);
    if (auto* rejected = std::get_if<Rejected>(&image)) {
      reject(*rejected);
      continue;
    }
    RemoteCounters::add(remote.counters.hits);
    return Fetched{std::move(record), std::move(std::get<std::vector<std::uint8_t>>(image)), i};
  }
  return std::nullopt;
}

void RemoteTier::upload(Upload item) {
  if (!uploads()) return;
  const proto::Digest256 key_id = proto::key_id(item.record.key);
  if (!m_queue.push(std::move(item))) {
    release_lease(key_id);  // nobody will upload it: let another host compile now
    for (auto& remote : m_remotes) RemoteCounters::add(remote->counters.upload_drops);
    spdlog::warn("remote tier: upload queue full ({} entries, {} bytes at most): an upload was dropped",
                 m_settings.upload_queue_entries, m_settings.upload_queue_bytes);
  }
}

void RemoteTier::upload_loop() {
  while (auto item = m_queue.pop()) {
    item->record.image_digest = image_digest(proto::Bytes(item->image));
    item->record.image_size = item->image.size();
    const std::string object = encode_image_object(proto::Bytes(item->image));
    item->record.object_size = object.size();
    if (item->record.created_at_ms == 0) item->record.created_at_ms = unix_ms();
    if (item->record.host.empty()) item->record.host = m_settings.host;
    const std::string record = encode_signed_record(item->record, *m_signing);
    const std::string source = item->source.empty() || !m_settings.upload_source
                                   ? std::string()
                                   : encode_source_object(proto::Bytes(item->source));
    for (auto& remote : m_remotes) upload_to(*remote, *item, record, object, source);
    release_lease(proto::key_id(item->record.key));
  }
}

void RemoteTier::upload_to(RemoteEndpoint& remote, const Upload& upload, const std::string& record,
                           const std::string& image_object, const std::string& source_object) {
  const Deadline deadline = Clock::now() + m_settings.background_timeout;
  auto put = [&](std::string_view space, const std::string& id, const std::string& value) {
    auto done = call<void>(remote, [&](RemoteBackend& b) {
      return b.put({space, id}, value, std::chrono::milliseconds(0), deadline);
    });
    if (done) RemoteCounters::add(remote.counters.bytes_written, value.size());
    return done.ok();
  };
  auto present = [&](std::string_view space, const std::string& id) {
    auto there = call<bool>(remote, [&](RemoteBackend& b) { return b.exists({space, id}, deadline); });
    return there && *there;
  };
  // The image before the records that name it, so a record found never points at nothing (a
  // reader that finds one anyway rejects it as image_missing). Written even where an object of
  // that name exists: one damaged in the remote would otherwise be kept, and every record naming
  // it rejected fleet-wide, for good (docs/remote-layout.md "Image object").
  const std::string image_id = hex_id(upload.record.image_digest);
  bool ok = put(k_space_image, image_id, image_object);
  if (ok && !source_object.empty()) {
    const std::string source_id = hex_id(upload.record.key.content);
    if (!present(k_space_source, source_id)) put(k_space_source, source_id, source_object);  // optional: verify only
  }
  ok = ok && put(k_space_index, hex_id(proto::key_id(upload.record.key)), record);
  ok = ok && put(k_space_fast,
                 hex_id(proto::fast_key_id(proto::fast_key_of(upload.record.key, upload.record.content_fast))), record);
  if (ok) {
    RemoteCounters::add(remote.counters.uploads);
  } else {
    RemoteCounters::add(remote.counters.upload_failures);
    spdlog::warn("remote {}: upload of key_id={} failed", remote.backend->name(),
                 hex_id(proto::key_id(upload.record.key)));
  }
}

std::string RemoteTier::lease_value() const {
  const std::int64_t expires = unix_ms() + m_settings.lease_ttl.count();
  return m_settings.host + " " + std::to_string(::getpid()) + " " + std::to_string(expires);
}

std::chrono::milliseconds RemoteTier::lease_call_timeout() const {
  // Rationale: remote_timeout (50 ms) bounds what a load waits on a miss; a lease call runs on a
  // compile thread that is about to spend seconds compiling, so it may wait out a Redis paused for
  // a few hundred ms. Bounded by a third of the lease's life, so renewals stay within it.
  return std::min<std::chrono::milliseconds>(std::chrono::milliseconds(1000), m_settings.lease_ttl / 3);
}

LeaseAnswer RemoteTier::take_lease(const proto::Digest256& key_id) {
  if (!uploads()) return {};
  const Deadline deadline = Clock::now() + lease_call_timeout();
  const std::string id = hex_id(key_id);
  for (std::size_t i = 0; i < m_remotes.size(); ++i) {
    RemoteEndpoint& remote = *m_remotes[i];
    if (remote.leases_unsupported.load(std::memory_order_relaxed)) continue;
    for (int attempt = 0; attempt < 2; ++attempt) {
      const std::string value = lease_value();
      auto taken = call<bool>(remote, [&](RemoteBackend& b) {
        return b.put_if_absent({k_space_lease, id}, value, m_settings.lease_ttl, deadline);
      });
      if (!taken) {
        if (taken.error().code == common::ErrorCode::unsupported) {
          remote.leases_unsupported = true;
          break;  // the next remote may hold leases
        }
        return {LeaseTake::unknown, i, 0};  // not an answer: someone may hold it
      }
      if (*taken) {
        RemoteCounters::add(remote.counters.leases_won);
        std::lock_guard lock(m_leases_mutex);
        m_held_leases[key_id] = {i, value};
        return {LeaseTake::won, i, 0};
      }
      // Held. A server without expiry (HTTP) keeps a dead holder's lease: past its written expiry
      // it is removed and taken once more.
      auto holder = call<std::optional<std::string>>(remote, [&](RemoteBackend& b) {
        return b.get({k_space_lease, id}, 256, deadline);
      });
      if (!holder) return {LeaseTake::unknown, i, 0};
      if (!*holder) continue;  // released meanwhile: try once more
      const std::int64_t expiry = lease_expiry(**holder);
      if (attempt > 0 || expiry == 0 || expiry > unix_ms()) return {LeaseTake::held_elsewhere, i, expiry};
      // That stale lease only: another host may have taken the key since it was read.
      (void)release_lease_on(*this, remote, id, **holder, deadline);
    }
  }
  return {};
}

LeaseState RemoteTier::lease_state(const proto::Digest256& key_id) {
  const Deadline deadline = Clock::now() + lease_call_timeout();
  const std::string id = hex_id(key_id);
  bool unknown = false;
  for (std::size_t i = 0; i < m_remotes.size(); ++i) {
    if (m_remotes[i]->leases_unsupported.load(std::memory_order_relaxed)) continue;
    auto holder = call<std::optional<std::string>>(*m_remotes[i], [&](RemoteBackend& b) {
      return b.get({k_space_lease, id}, 256, deadline);
    });
    if (!holder) {
      unknown = true;
      continue;
    }
    if (!*holder) continue;
    const std::int64_t expiry = lease_expiry(**holder);
    if (expiry == 0 || expiry > unix_ms()) return {LeaseSeen::held, i, expiry};
  }
  return {unknown ? LeaseSeen::unknown : LeaseSeen::free, 0, 0};
}

std::optional<std::size_t> RemoteTier::lease_held(const proto::Digest256& key_id) {
  const LeaseState state = lease_state(key_id);
  if (state.seen != LeaseSeen::held) return std::nullopt;
  return state.remote;
}

std::optional<bool> RemoteTier::builder_alive() {
  const Deadline deadline = Clock::now() + lease_call_timeout();
  bool answered = false;
  for (auto& remote : m_remotes) {
    if (remote->leases_unsupported.load(std::memory_order_relaxed)) continue;
    auto value = call<std::optional<std::string>>(*remote, [&](RemoteBackend& b) {
      return b.get({k_space_fleet, k_fleet_builders}, 256, deadline);
    });
    if (!value) continue;
    answered = true;
    // Its written expiry too: a server without expiry (HTTP) keeps the value of a fleet whose
    // builders are all gone.
    if (*value && (lease_expiry(**value) == 0 || lease_expiry(**value) > unix_ms())) return true;
  }
  if (answered) return false;
  return std::nullopt;
}

// Some builder is up: written by every builder every third of lease_ttl with that ttl, so it is
// gone within one lease_ttl of the last builder's end (docs/remote-layout.md "Builders").
void RemoteTier::announce_builder() {
  if (!m_settings.announce_builder) return;
  const Deadline deadline = Clock::now() + lease_call_timeout();
  const std::string value = lease_value();
  for (auto& remote : m_remotes) {
    if (remote->leases_unsupported.load(std::memory_order_relaxed)) continue;
    // Only where leases can be taken: consumers wait for a builder's lease, which a server without
    // them (HTTP without ?lease=if-none-match: answered at once, no request sent) never holds.
    auto written = call<bool>(*remote, [&](RemoteBackend& b) {
      return b.put_if_absent({k_space_fleet, k_fleet_builders}, value, m_settings.lease_ttl, deadline);
    });
    if (!written && written.error().code == common::ErrorCode::unsupported) {
      remote->leases_unsupported = true;
      continue;
    }
    if (!written || *written) continue;
    (void)call<void>(*remote, [&](RemoteBackend& b) {
      return b.put({k_space_fleet, k_fleet_builders}, value, m_settings.lease_ttl, deadline);
    });
  }
}

void RemoteTier::release_lease(const proto::Digest256& key_id) {
  std::pair<std::size_t, std::string> held;
  {
    std::lock_guard lock(m_leases_mutex);
    const auto it = m_held_leases.find(key_id);
    if (it == m_held_leases.end()) return;
    held = std::move(it->second);
    m_held_leases.erase(it);
  }
  // Only our own: a lease that expired under a slow compile may be another host's by now.
  const Deadline deadline = Clock::now() + m_settings.background_timeout;
  (void)release_lease_on(*this, *m_remotes[held.first], hex_id(key_id), held.second, deadline);
}

bool RemoteTier::holds_lease(const proto::Digest256& key_id) {
  std::lock_guard lock(m_leases_mutex);
  return m_held_leases.contains(key_id);
}

void RemoteTier::renew_loop() {
  std::unique_lock lock(m_leases_mutex);
  while (!m_stopping) {
    lock.unlock();
    announce_builder();
    lock.lock();
    m_renew_wake.wait_for(lock, m_settings.lease_ttl / 3, [&] { return m_stopping; });
    if (m_stopping) return;
    lock.unlock();
    renew_leases();
    lock.lock();
  }
}

// Each lease this host holds, written again with a fresh expiry while it is still ours: compared
// and replaced in one step where the remote can (lease_change.hpp), so a lease that expired and was
// taken by another host is never overwritten.
void RemoteTier::renew_leases() {
  std::map<proto::Digest256, std::pair<std::size_t, std::string>> held;
  {
    std::lock_guard lock(m_leases_mutex);
    held = m_held_leases;
  }
  for (const auto& [key_id, lease] : held) {
    RemoteEndpoint& remote = *m_remotes[lease.first];
    const Deadline deadline = Clock::now() + m_settings.lease_ttl / 3;
    const std::string id = hex_id(key_id);
    const std::string value = lease_value();
    auto renewed = renew_lease_on(*this, remote, id, lease.second, value, deadline);
    if (!renewed) continue;  // counted; tried again next round, while the lease's ttl lasts
    bool released_meanwhile = false;
    {
      std::lock_guard lock(m_leases_mutex);
      const auto it = m_held_leases.find(key_id);
      if (it == m_held_leases.end() || it->second.second != lease.second) {
        released_meanwhile = true;
      } else if (*renewed == LeaseChange::done) {
        it->second.second = value;
      } else {
        m_held_leases.erase(it);  // not ours any more: the upload's release must not touch it
      }
    }
    if (released_meanwhile && *renewed == LeaseChange::done) {
      // The release compared the value before this renewal: the renewed lease is ours to give back.
      (void)release_lease_on(*this, remote, id, value, deadline);
    } else if (!released_meanwhile && *renewed != LeaseChange::done) {
      spdlog::warn(
          "remote {}: the lease of key_id={} was lost (it expired before its renewal): another host may "
          "compile the key too",
          remote.backend->name(), id);
    }
  }
}

std::optional<std::vector<std::uint8_t>> RemoteTier::fetch_source(const proto::Digest256& content,
                                                                  std::size_t remote_index) {
  if (remote_index >= m_remotes.size()) return std::nullopt;
  RemoteEndpoint& remote = *m_remotes[remote_index];
  const Deadline deadline = Clock::now() + m_settings.background_timeout;
  auto object = call<std::optional<std::string>>(remote, [&](RemoteBackend& b) {
    return b.get({k_space_source, hex_id(content)}, static_cast<std::size_t>(m_settings.max_source), deadline);
  });
  if (!object || !*object) return std::nullopt;
  RemoteCounters::add(remote.counters.bytes_read, (*object)->size());
  return decode_source_object(**object, content, m_settings.max_source);
}

}  // namespace jitcache::daemon::remote
