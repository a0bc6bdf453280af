// Single flight for NVRTC compiles on one host (docs/transparent.md "NVRTC compiles"): processes of
// one uid that miss the same key at once take turns on a lock file named by the key id, so the
// first compiles and PUTs while the others wait, then look up again and are served its result.
//
// The lock is flock(2) on "<dir>/<key id>.lock", where <dir> is $XDG_RUNTIME_DIR/jitcache-nvrtc or
// /tmp/jitcache-nvrtc-<uid> (made 0700; used only when it is a directory this uid owns and nobody
// else may write, so another user cannot make a waiter wait). flock is released by the kernel when
// the holder exits or crashes, so a dead compiler never blocks the others for longer than its
// life. Rationale: the daemon cannot compile a caller's NVRTC (it never loads a library a caller
// names), so the callers coordinate themselves; across uids their results are in different
// namespaces anyway.
// Errors: none; a lock that cannot be made is no lock (each process compiles, as without it).
// Thread safety: one CompileLock per compile; the lock is per open file, so two threads of one
// process exclude each other too.
#pragma once

#include <chrono>
#include <string>

namespace jitcache::client::nvrtc {

// This uid's private directory for the NVRTC lock files and remembered library digests
// (nvrtc_identity.hpp), made if missing; empty when it is not a directory this uid owns and nobody
// else may write.
std::string private_directory();

// The directory private_directory() takes, whether or not it is fit.
std::string private_directory_path();

class CompileLock {
 public:
  // Takes the lock of `key_id_hex`, waiting at most `wait` for another holder.
  CompileLock(const std::string& key_id_hex, std::chrono::milliseconds wait);
  ~CompileLock();
  CompileLock(const CompileLock&) = delete;
  CompileLock& operator=(const CompileLock&) = delete;

  bool held() const { return m_held; }
  // Whether another process held it when this one asked: its result may be stored by now.
  bool waited() const { return m_waited; }
  // Why there is no single flight, for the process report; empty when there is. Said, not kept
  // silent: another uid that made /tmp/jitcache-nvrtc-<uid> first turns it off for this uid.
  const std::string& unavailable() const { return m_unavailable; }

 private:
  int m_fd = -1;
  bool m_held = false;
  bool m_waited = false;
  std::string m_unavailable;
};

}  // namespace jitcache::client::nvrtc
