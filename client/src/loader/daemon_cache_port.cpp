#include <client/src/loader/daemon_cache_port.hpp>

#include <client/src/loader/pending_hit_notes.hpp>
#include <client/src/transport/published_reader.hpp>
#include <common/result.hpp>

namespace jitcache::client::loader {

using common::ErrorCode;
using common::make_error;

common::Result<std::optional<transport::FetchedImage>> DaemonCachePort::read_published(const proto::FastKey& fast_key) {
  const ClientSettings& settings = m_daemon->settings();
  return transport::read_published(settings.socket_path, settings.daemon_trust, fast_key, proto::fast_key_id(fast_key));
}

void DaemonCachePort::note_published_hit(const proto::FastKey& fast_key) {
  PendingHitNotes::instance().add(m_daemon->connect_options(), fast_key);
}

common::Result<DaemonLease>& DaemonCachePort::lease() {
  if (!m_lease) m_lease.emplace(m_daemon->acquire());
  return *m_lease;
}

common::Error DaemonCachePort::failed(const common::Error& error) {
  // A daemon that answered with a status (busy, draining) is alive: the connection stays.
  if (error.reply_status != 0) return error;
  if (m_lease && *m_lease) (*m_lease)->broken(error);
  m_lease.emplace(make_error(ErrorCode::unavailable, "jitcached failed earlier in this load (" + error.message + ")"));
  return error;
}

common::Result<void> DaemonCachePort::connect() {
  JITCACHE_TRY(lease());
  return {};
}

std::optional<std::uint64_t> DaemonCachePort::known_capabilities() const {
  if (!m_lease || !*m_lease) return std::nullopt;
  return (*m_lease)->known_capabilities();
}

common::Result<std::uint64_t> DaemonCachePort::capabilities() {
  auto& held = lease();
  JITCACHE_TRY(held);
  auto capabilities = held->capabilities();
  if (!capabilities) return failed(capabilities.error());
  return capabilities;
}

template <class Call>
common::Result<std::optional<transport::FetchedImage>> DaemonCachePort::lookup_with(Call call) {
  auto& held = lease();
  JITCACHE_TRY(held);
  ++m_counters.lookups;
  auto fetched = call(held->client());
  if (!fetched && fetched.error().code == ErrorCode::too_large && fetched.error().reply_status == 0) {
    // An image above the default reply limit: HELLO learns this daemon's limit, on a fresh
    // connection (the refused reply is still unread on this one).
    held->discard();
    m_lease.emplace(m_daemon->acquire());
    auto& fresh = *m_lease;
    JITCACHE_TRY(fresh);
    if (auto hello = fresh->capabilities(); !hello) return failed(hello.error());
    ++m_counters.lookups;
    fetched = call(fresh->client());
  }
  if (!fetched) return failed(fetched.error());
  return fetched;
}

common::Result<std::optional<transport::FetchedImage>> DaemonCachePort::lookup_fast(const proto::FastKey& fast_key,
                                                                                    transport::ImageDelivery delivery) {
  return lookup_with([&](transport::DaemonClient& client) { return client.lookup_fast(fast_key, delivery); });
}

common::Result<std::optional<transport::FetchedImage>> DaemonCachePort::lookup(const proto::KeyFields& key,
                                                                               transport::ImageDelivery delivery) {
  return lookup_with([&](transport::DaemonClient& client) { return client.lookup(key, delivery); });
}

common::Result<transport::CompileAnswer> DaemonCachePort::compile(const proto::CompileRequest& request,
                                                                  std::chrono::milliseconds wait) {
  auto& held = lease();
  JITCACHE_TRY(held);
  auto answer = held->client().compile(request, wait);
  if (!answer && answer.error().code == ErrorCode::timeout) {
    // A compile that outlasts the wait is not a dead daemon: it finishes and stores the image for
    // the next load. Only this connection, with the reply still to come on it, is given up.
    held->discard();
    m_lease.emplace(
        make_error(ErrorCode::unavailable, "the connection to jitcached was closed after COMPILE timed out"));
    return answer.error();
  }
  if (!answer) return failed(answer.error());
  return answer;
}

common::Result<void> DaemonCachePort::put(const proto::PutRequest& request) {
  auto& held = lease();
  JITCACHE_TRY(held);
  auto stored = held->client().put(request);
  if (!stored) return failed(stored.error());
  return {};
}

common::Result<void> DaemonCachePort::report_failure(const proto::ReportFailureRequest& request) {
  auto& held = lease();
  JITCACHE_TRY(held);
  auto reported = held->client().report_failure(request);
  if (!reported) return failed(reported.error());
  return {};
}

common::Result<void> DaemonCachePort::note_nvrtc_uncached(proto::NvrtcUncachedReason reason) {
  auto capabilities = this->capabilities();
  JITCACHE_TRY(capabilities);
  if ((*capabilities & proto::k_capability_nvrtc_note) == 0) return {};
  auto& held = lease();
  JITCACHE_TRY(held);
  auto noted = held->client().nvrtc_note(reason);
  if (!noted) return failed(noted.error());
  return {};
}

}  // namespace jitcache::client::loader

namespace jitcache::client::loader {

common::Result<proto::NvrtcCompileReply> DaemonCachePort::nvrtc_compile(const proto::NvrtcCompileRequest& request,
                                                                        std::chrono::milliseconds wait) {
  auto capabilities = this->capabilities();
  JITCACHE_TRY(capabilities);
  if ((*capabilities & proto::k_capability_nvrtc_compile) == 0) {
    return make_error(ErrorCode::unsupported, "jitcached compiles no NVRTC program (no capability nvrtc_compile)");
  }
  auto& held = lease();
  JITCACHE_TRY(held);
  auto answer = held->client().nvrtc_compile(request, wait);
  if (!answer && answer.error().code == ErrorCode::timeout) {
    // As COMPILE's: the daemon is compiling, not dead; only this connection is given up.
    held->discard();
    m_lease.emplace(
        make_error(ErrorCode::unavailable, "the connection to jitcached was closed after NVRTC_COMPILE timed out"));
    return answer.error();
  }
  if (!answer) return failed(answer.error());
  return answer;
}

}  // namespace jitcache::client::loader
