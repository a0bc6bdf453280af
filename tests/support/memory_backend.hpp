// MemoryBackend: a remote (daemon/remote/backend/remote_backend.hpp) held in this process's memory,
// for unit tests of the fleet tier's own logic (checks, breaker, leases, uploads) where a test must
// place exact bytes, make a call fail with a chosen error, or see what was written. The backends
// themselves are tested against real Redis and nginx servers (tests/integration/test_daemon_remote_*),
// and so is the tier end to end.
// Thread safety: every method may be called from any thread.
#pragma once

#include <chrono>
#include <map>
#include <mutex>
#include <optional>
#include <string>

#include <daemon/remote/backend/remote_backend.hpp>

namespace jitcache::testing {

class MemoryBackend final : public daemon::remote::RemoteBackend {
 public:
  using RemoteKey = daemon::remote::RemoteKey;
  using Deadline = daemon::remote::Deadline;

  using LeaseChange = daemon::remote::LeaseChange;

  // `expiring`: values written with a ttl expire (as Redis); else ttl is ignored (as HTTP).
  // `leases`: put_if_absent works; else it is `unsupported` (a plain HTTP server).
  // `atomic_leases`: renew_lease and release_lease compare and change in one step (as Redis's
  // scripts); else they are `unsupported` and send nothing (as HTTP). Never without `leases`.
  explicit MemoryBackend(bool expiring = true, bool leases = true, bool atomic_leases = true)
      : m_expiring(expiring), m_leases(leases), m_atomic_leases(leases && atomic_leases) {}

  std::string name() const override { return "memory://test"; }

  common::Result<std::optional<std::string>> get(RemoteKey key, std::size_t max_bytes, Deadline) override {
    std::lock_guard lock(m_mutex);
    if (auto failure = take_failure()) return *failure;
    ++m_calls;
    auto it = live(key);
    if (it == m_values.end()) return std::optional<std::string>();
    if (it->second.value.size() > max_bytes) {
      return common::make_error(common::ErrorCode::too_large, "value over max_bytes");
    }
    return std::optional<std::string>(it->second.value);
  }

  common::Result<bool> exists(RemoteKey key, Deadline) override {
    std::lock_guard lock(m_mutex);
    if (auto failure = take_failure()) return *failure;
    ++m_calls;
    return live(key) != m_values.end();
  }

  common::Result<void> put(RemoteKey key, std::string_view value, std::chrono::milliseconds ttl, Deadline) override {
    std::lock_guard lock(m_mutex);
    if (auto failure = take_failure()) return *failure;
    ++m_calls;
    m_values[name_of(key)] = Value{std::string(value), expiry(ttl)};
    return {};
  }

  common::Result<bool> put_if_absent(RemoteKey key, std::string_view value, std::chrono::milliseconds ttl,
                                     Deadline) override {
    std::lock_guard lock(m_mutex);
    if (auto failure = take_failure()) return *failure;
    ++m_calls;
    if (!m_leases) return common::make_error(common::ErrorCode::unsupported, "no conditional PUT");
    if (live(key) != m_values.end()) return false;
    m_values[name_of(key)] = Value{std::string(value), expiry(ttl)};
    return true;
  }

  common::Result<void> remove(RemoteKey key, Deadline) override {
    std::lock_guard lock(m_mutex);
    if (auto failure = take_failure()) return *failure;
    ++m_calls;
    m_values.erase(name_of(key));
    return {};
  }

  common::Result<LeaseChange> renew_lease(RemoteKey key, std::string_view current, std::string_view renewed,
                                          std::chrono::milliseconds ttl, Deadline) override {
    return change_lease(key, current, [&](auto it) { it->second = Value{std::string(renewed), expiry(ttl)}; });
  }

  common::Result<LeaseChange> release_lease(RemoteKey key, std::string_view current, Deadline) override {
    return change_lease(key, current, [&](auto it) { m_values.erase(it); });
  }

  common::Result<void> ping(Deadline) override {
    std::lock_guard lock(m_mutex);
    if (auto failure = take_failure()) return *failure;
    ++m_calls;
    return {};
  }

  // What tests place and inspect: "<space>/<id>".
  void set(const std::string& name, std::string value) {
    std::lock_guard lock(m_mutex);
    m_values[name] = Value{std::move(value), {}};
  }
  std::optional<std::string> value(const std::string& name) {
    std::lock_guard lock(m_mutex);
    auto it = m_values.find(name);
    if (it == m_values.end()) return std::nullopt;
    return it->second.value;
  }
  std::map<std::string, std::string> contents() {
    std::lock_guard lock(m_mutex);
    std::map<std::string, std::string> out;
    for (const auto& [name, v] : m_values) out[name] = v.value;
    return out;
  }
  // The next `count` calls fail with `code` (count < 0: every call until cleared with 0).
  void fail_next(int count, common::ErrorCode code = common::ErrorCode::timeout) {
    std::lock_guard lock(m_mutex);
    m_fail_count = count;
    m_fail_code = code;
  }
  int calls() {
    std::lock_guard lock(m_mutex);
    return m_calls;
  }

 private:
  // Compare and change in one step, as Redis's scripts do: `change` runs only on the caller's lease.
  template <class Change>
  common::Result<LeaseChange> change_lease(RemoteKey key, std::string_view current, Change&& change) {
    std::lock_guard lock(m_mutex);
    if (!m_atomic_leases) return LeaseChange::unsupported;
    if (auto failure = take_failure()) return *failure;
    ++m_calls;
    auto it = live(key);
    if (it == m_values.end() || it->second.value != current) return LeaseChange::lost;
    change(it);
    return LeaseChange::done;
  }

  struct Value {
    std::string value;
    std::optional<std::chrono::steady_clock::time_point> expires;
  };
  static std::string name_of(RemoteKey key) { return std::string(key.space) + "/" + std::string(key.id); }
  std::optional<std::chrono::steady_clock::time_point> expiry(std::chrono::milliseconds ttl) const {
    if (!m_expiring || ttl.count() == 0) return std::nullopt;
    return std::chrono::steady_clock::now() + ttl;
  }
  std::map<std::string, Value>::iterator live(RemoteKey key) {
    auto it = m_values.find(name_of(key));
    if (it != m_values.end() && it->second.expires && *it->second.expires <= std::chrono::steady_clock::now()) {
      m_values.erase(it);
      return m_values.end();
    }
    return it;
  }
  std::optional<common::Error> take_failure() {
    if (m_fail_count == 0) return std::nullopt;
    if (m_fail_count > 0) --m_fail_count;
    ++m_calls;
    return common::make_error(m_fail_code, "injected failure");
  }

  const bool m_expiring;
  const bool m_leases;
  const bool m_atomic_leases;
  std::mutex m_mutex;
  std::map<std::string, Value> m_values;
  int m_fail_count = 0;
  common::ErrorCode m_fail_code = common::ErrorCode::timeout;
  int m_calls = 0;
};

}  // namespace jitcache::testing
