// The live link sessions of the process, by the handle the program holds: the real CUlinkState or
// nvJitLinkHandle, which is what the program got back from create. Keying by the real handle means a
// call that reaches the real library some other way still works on a real object, and a handle the
// registry does not know (a session created before the preload was active, a failed create) goes to
// the real function unchanged.
// Thread safety: every method locks; a session found stays alive while the caller holds it, even if
// another thread destroys its handle meanwhile. fork(): the owner holds the lock across it
// (hold_across_fork), so a child never inherits it locked by a thread it does not have.
#pragma once

#include <memory>
#include <mutex>
#include <unordered_map>

namespace jitcache::client::link {

template <class Handle, class Session>
class SessionRegistry {
 public:
  void add(Handle handle, std::shared_ptr<Session> session) {
    std::lock_guard lock(m_mutex);
    m_sessions[handle] = std::move(session);
  }
  std::shared_ptr<Session> find(Handle handle) const {
    std::lock_guard lock(m_mutex);
    auto it = m_sessions.find(handle);
    return it == m_sessions.end() ? nullptr : it->second;
  }
  std::shared_ptr<Session> take(Handle handle) {
    std::lock_guard lock(m_mutex);
    auto it = m_sessions.find(handle);
    if (it == m_sessions.end()) return nullptr;
    auto session = std::move(it->second);
    m_sessions.erase(it);
    return session;
  }
  std::size_t size() const {
    std::lock_guard lock(m_mutex);
    return m_sessions.size();
  }

  // For pthread_atfork's prepare, and parent and child handlers.
  void lock_for_fork() { m_mutex.lock(); }
  void unlock_after_fork() { m_mutex.unlock(); }

 private:
  mutable std::mutex m_mutex;
  std::unordered_map<Handle, std::shared_ptr<Session>> m_sessions;
};

}  // namespace jitcache::client::link
