#include <client/src/loader/daemon_link.hpp>

#include <algorithm>

#include <client/src/loader/daemon_back_off.hpp>
#include <client/src/loader/pending_hit_notes.hpp>
#include <client/src/transport/owned_socket.hpp>
#include <common/result.hpp>

namespace jitcache::client::loader {

using common::ErrorCode;
using common::make_error;
using Clock = std::chrono::steady_clock;

namespace {
// Rationale: more idle connections than this are closed; a process rarely loads from more threads
// at once, and each idle connection holds a daemon slot.
constexpr std::size_t k_max_idle_connections = 4;
}  // namespace

DaemonLease::DaemonLease(DaemonLink* link, transport::DaemonClient client, std::optional<std::uint64_t> capabilities)
    : m_link(link), m_client(std::move(client)), m_capabilities(capabilities) {}

DaemonLease& DaemonLease::operator=(DaemonLease&& other) noexcept {
  if (this != &other) {
    if (m_client && m_link != nullptr) m_link->give_back(std::move(*m_client), m_capabilities);
    m_link = std::exchange(other.m_link, nullptr);
    m_client = std::move(other.m_client);
    other.m_client.reset();
    m_capabilities = other.m_capabilities;
  }
  return *this;
}

DaemonLease::~DaemonLease() {
  if (m_client && m_link != nullptr) m_link->give_back(std::move(*m_client), m_capabilities);
}

common::Result<std::uint64_t> DaemonLease::capabilities() {
  if (m_capabilities) return *m_capabilities;
  if (!m_client) return make_error(ErrorCode::unavailable, "the connection to jitcached was dropped");
  auto hello = m_client->hello("libjitcache");
  JITCACHE_TRY(hello);
  m_capabilities = hello->capabilities;
  return *m_capabilities;
}

void DaemonLease::broken(const common::Error& why) {
  m_client.reset();
  if (m_link != nullptr) m_link->mark_unavailable(why);
}

DaemonLink::~DaemonLink() { PendingHitNotes::instance().flush(m_settings.socket_path); }

transport::ConnectOptions DaemonLink::connect_options() const {
  transport::ConnectOptions options;
  options.socket_path = m_settings.socket_path;
  options.connect_timeout = m_settings.connect_timeout;
  options.io_timeout = m_settings.request_timeout;
  options.reply_spin = m_settings.reply_spin;
  options.trust = m_settings.daemon_trust;
  return options;
}

common::Result<DaemonLease> DaemonLink::acquire() {
  std::optional<Idle> reused;
  {
    std::lock_guard lock(m_mutex);
    if (m_pid != ::getpid()) {
      m_idle.clear();
      m_pid = ::getpid();
    }
    if (Clock::now() < m_retry_after) {
      return make_error(ErrorCode::unavailable, "jitcached was unavailable moments ago (" + m_unavailable_reason + ")");
    }
    // Hit notes found it stuck or gone (pending_hit_notes.hpp): no load waits for it either.
    if (auto until = PendingHitNotes::instance().backed_off_until(m_settings.socket_path)) {
      m_retry_after = std::max(m_retry_after, *until);
      m_unavailable_reason = "it did not take hit notes";
      m_idle.clear();
      return make_error(ErrorCode::unavailable, "jitcached was unavailable moments ago (" + m_unavailable_reason + ")");
    }
    while (!m_idle.empty() && !reused) {
      std::optional<Idle> idle(std::move(m_idle.back()));
      m_idle.pop_back();
      // A connection whose descriptor the program closed (and maybe reused) is forgotten, not
      // judged: the daemon is fine, the next one is tried, or a new one made.
      if (!idle->client.connection().still_ours()) continue;
      // Built after the lock is released: a lease's destructor takes the same lock.
      reused = std::move(idle);
    }
  }
  if (reused) return DaemonLease(this, std::move(reused->client), reused->capabilities);
  auto client = transport::DaemonClient::connect(connect_options());
  if (!client) {
    mark_unavailable(client.error());
    return client.error();
  }
  return DaemonLease(this, std::move(*client), std::nullopt);
}

void DaemonLink::mark_unavailable(const common::Error& why) {
  const auto until = Clock::now() + back_off_for(why);
  {
    std::lock_guard lock(m_mutex);
    m_idle.clear();
    m_retry_after = until;
    m_unavailable_reason = why.message;
  }
  // Notes for this daemon wait out the same back-off (not under m_mutex: the two locks never nest).
  PendingHitNotes::instance().back_off(m_settings.socket_path, until);
}

void DaemonLink::give_back(transport::DaemonClient client, std::optional<std::uint64_t> capabilities) {
  std::lock_guard lock(m_mutex);
  if (m_pid != ::getpid()) return;  // a connection the parent also holds (see m_pid)
  // Rationale: under a small RLIMIT_NOFILE an idle connection is a descriptor the program may
  // need; it is closed after each load there (docs/client-guide.md "Descriptors").
  if (transport::descriptor_limit_is_small()) return;
  if (m_idle.size() < k_max_idle_connections) m_idle.push_back(Idle{std::move(client), capabilities});
}

}  // namespace jitcache::client::loader
