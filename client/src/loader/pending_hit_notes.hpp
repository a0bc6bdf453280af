// Hit notes (HIT_NOTE, PROTOCOL.md §5) for hits served from the daemon's published copies, sent
// off the load's path: a published hit makes no socket call at all, and the daemon still learns of
// it (hits, last use for eviction). Notes wait here, per socket, and go out on a connection of
// their own when 64 have gathered, when the process configures the library again, and at exit.
// Rationale: connecting costs tens of microseconds on a virtual machine even when nobody waits for
// the answer (the kernel wakes the daemon's idle CPU); a small module's published hit is ~0.3 ms in
// all (docs/benchmarks.md). A note that is never sent (the process killed, the daemon down) costs
// the daemon one hit in its counts, never the program anything.
//
// Thread safety: every method may be called from any thread. Notes added in a parent before fork()
// are dropped in the child (the parent sends them).
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include <client/src/transport/daemon_client.hpp>

namespace jitcache::client::loader {

class PendingHitNotes {
 public:
  static constexpr std::size_t k_batch = 64;

  // The process's notes. Destroyed at exit, which sends what is left.
  static PendingHitNotes& instance();
  ~PendingHitNotes();

  void add(const transport::ConnectOptions& daemon, const proto::FastKey& fast_key);
  // Sends the notes for this socket now (a connection of their own; replies are not read).
  void flush(const std::string& socket_path);

 private:
  struct Queue {
    transport::ConnectOptions daemon;
    pid_t pid = 0;
    std::vector<proto::FastKey> notes;
  };
  static void send(Queue queue);

  std::mutex m_mutex;
  std::map<std::string, Queue> m_queues;  // by socket path
};

}  // namespace jitcache::client::loader
