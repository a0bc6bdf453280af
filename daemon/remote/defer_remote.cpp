#include <daemon/remote/defer_remote.hpp>

namespace jitcache::daemon::remote {

namespace {
thread_local DeferRemote* g_scope = nullptr;
}  // namespace

DeferRemote::DeferRemote() : m_outer(g_scope) { g_scope = this; }

DeferRemote::~DeferRemote() { g_scope = m_outer; }

bool DeferRemote::defer_here() {
  if (g_scope == nullptr) return false;
  g_scope->m_deferred = true;
  return true;
}

bool DeferRemote::deferred_here() { return g_scope != nullptr && g_scope->m_deferred; }

}  // namespace jitcache::daemon::remote
