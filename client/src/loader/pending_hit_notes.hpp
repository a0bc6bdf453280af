// Hit notes (HIT_NOTE, PROTOCOL.md §5) for hits served from the daemon's published copies, sent
// off the load's path: a published hit makes no socket call at all, and the daemon still learns of
// it (hits, last use for eviction). Notes wait here, per socket, and go out on a connection of
// their own when 64 have gathered, when the process configures the library again, and at exit.
// Rationale: connecting costs tens of microseconds on a virtual machine even when nobody waits for
// the answer (the kernel wakes the daemon's idle CPU); a small module's published hit is ~0.3 ms in
// all (docs/benchmarks.md). A note that is never sent (the process killed, the daemon down or
// stuck) costs the daemon one hit in its counts, never the program anything.
//
// A daemon that failed to take notes (refused, timed out) is left alone for the same back-off as
// a load's (daemon_link.hpp): notes for it are dropped, not sent, until the back-off ends, so a
// stuck daemon costs one bounded wait, not one per 64 hits; DaemonLink shares what it learns here.
// The object is never destroyed (a load on another thread, or in an atexit handler or destructor,
// may add a note after exit() began); what is left is sent by an atexit handler within
// k_exit_budget, skipped for a daemon known to be stuck.
//
// Thread safety: every method may be called from any thread. Notes added in a parent before fork()
// are dropped in the child (the parent sends them); the mutex is held across fork() so the child
// starts with it free.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <client/src/transport/daemon_client.hpp>

namespace jitcache::client::loader {

class PendingHitNotes {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr std::size_t k_batch = 64;
  // Rationale: a daemon answers a note in well under a millisecond; a batch (64 notes, sent at
  // once) that takes longer than this is a daemon in trouble, and the loading thread stops waiting.
  static constexpr std::chrono::milliseconds k_batch_budget{200};
  // Rationale: at exit the program is done; the notes are worth a short wait, not a visible one.
  static constexpr std::chrono::milliseconds k_exit_budget{50};

  // The process's notes; never destroyed.
  static PendingHitNotes& instance();

  void add(const transport::ConnectOptions& daemon, const proto::FastKey& fast_key);
  // Sends the notes for this socket now (a connection of their own), unless in a back-off.
  void flush(const std::string& socket_path);
  // The daemon at this socket is not to be waited for until `until` (a load found it stuck or
  // gone): notes for it are dropped meanwhile.
  void back_off(const std::string& socket_path, Clock::time_point until);
  // The end of a back-off notes started for this socket (a load need not wait for such a daemon).
  std::optional<Clock::time_point> backed_off_until(const std::string& socket_path);

 private:
  PendingHitNotes() = default;
  ~PendingHitNotes() = delete;
  struct Queue {
    transport::ConnectOptions daemon;
    pid_t pid = 0;
    std::vector<proto::FastKey> notes;
    Clock::time_point retry_after{};
  };
  static void flush_all_at_exit();
  // Sends every note of `queue` within `budget`; the error when the daemon failed to take them.
  static common::Result<void> send(const Queue& queue, std::chrono::milliseconds budget);
  // Sends a queue taken out of the map and records a failure as a back-off.
  void send_and_judge(const Queue& queue, std::chrono::milliseconds budget);

  std::mutex m_mutex;
  std::map<std::string, Queue> m_queues;  // by socket path
};

}  // namespace jitcache::client::loader
