// DeferRemote: keeps remote I/O off the threads that serve local hits (docs/operations.md "A
// fleet": "remote I/O never delays a local hit"). A connection's worker thread runs a LOOKUP inside
// a DeferRemote scope: the tiered store then answers from the local store only, and where the
// remotes would have been asked (a local miss they might serve) it says so here instead of asking.
// The connection then runs the LOOKUP again on the remote lookup lane (server.hpp), where the
// tiered store asks the remotes, and the worker thread goes on serving hits meanwhile.
// Thread safety: a scope belongs to the thread that made it (thread-local); it must end before the
// thread suspends a coroutine (the coroutine may resume elsewhere).
#pragma once

namespace jitcache::daemon::remote {

class DeferRemote {
 public:
  DeferRemote();
  ~DeferRemote();
  DeferRemote(const DeferRemote&) = delete;
  DeferRemote& operator=(const DeferRemote&) = delete;

  // Whether a lookup in this scope would have asked the remotes.
  bool deferred() const { return m_deferred; }

  // For the tiered store: true (and noted) when this thread is in a scope, so the remotes must not
  // be asked here.
  static bool defer_here();
  // For the request handler: whether this thread's scope has deferred a lookup (its miss is not
  // the LOOKUP's answer, and is not counted).
  static bool deferred_here();

 private:
  DeferRemote* m_outer;
  bool m_deferred = false;
};

}  // namespace jitcache::daemon::remote
