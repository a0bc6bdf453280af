#include <client/src/loader/pending_hit_notes.hpp>

#include <pthread.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <new>
#include <utility>

#include <client/src/loader/daemon_back_off.hpp>
#include <proto/wire.hpp>

namespace jitcache::client::loader {

namespace {

PendingHitNotes* g_notes = nullptr;
std::mutex* g_notes_mutex = nullptr;

void lock_for_fork() { g_notes_mutex->lock(); }
void unlock_after_fork() { g_notes_mutex->unlock(); }

}  // namespace

PendingHitNotes& PendingHitNotes::instance() {
  // Placement into static storage that nothing destroys: a destroyed map met by a load on another
  // thread during exit crashed programs (docs/transparent.md "Exit").
  alignas(PendingHitNotes) static unsigned char storage[sizeof(PendingHitNotes)];
  static PendingHitNotes* notes = [] {
    auto* created = new (storage) PendingHitNotes();
    g_notes = created;
    g_notes_mutex = &created->m_mutex;
    ::pthread_atfork(&lock_for_fork, &unlock_after_fork, &unlock_after_fork);
    std::atexit(&PendingHitNotes::flush_all_at_exit);
    return created;
  }();
  return *notes;
}

void PendingHitNotes::flush_all_at_exit() {
  if (g_notes == nullptr) return;
  std::map<std::string, Queue> queues;
  {
    std::lock_guard lock(g_notes->m_mutex);
    for (auto& [socket, queue] : g_notes->m_queues) {
      if (queue.notes.empty()) continue;
      Queue taken{queue.daemon, queue.pid, std::exchange(queue.notes, {}), queue.retry_after};
      queues.emplace(socket, std::move(taken));
    }
  }
  const auto deadline = Clock::now() + k_exit_budget;
  for (auto& [socket, queue] : queues) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) break;
    g_notes->send_and_judge(queue, left);
  }
}

void PendingHitNotes::add(const transport::ConnectOptions& daemon, const proto::FastKey& fast_key) {
  Queue full;
  {
    std::lock_guard lock(m_mutex);
    Queue& queue = m_queues[daemon.socket_path];
    if (queue.pid != ::getpid()) {
      // A fresh queue, or one inherited over fork(): the parent sends its own notes.
      queue.notes.clear();
      queue.pid = ::getpid();
    }
    queue.daemon = daemon;
    if (Clock::now() < queue.retry_after) return;  // a daemon known to be stuck or gone: dropped
    queue.notes.push_back(fast_key);
    if (queue.notes.size() < k_batch) return;
    full = Queue{daemon, queue.pid, std::exchange(queue.notes, {}), queue.retry_after};
  }
  send_and_judge(full, k_batch_budget);
}

void PendingHitNotes::flush(const std::string& socket_path) {
  Queue queue;
  {
    std::lock_guard lock(m_mutex);
    auto found = m_queues.find(socket_path);
    if (found == m_queues.end()) return;
    queue = Queue{found->second.daemon, found->second.pid, std::exchange(found->second.notes, {}),
                  found->second.retry_after};
  }
  send_and_judge(queue, k_batch_budget);
}

void PendingHitNotes::back_off(const std::string& socket_path, Clock::time_point until) {
  std::lock_guard lock(m_mutex);
  Queue& queue = m_queues[socket_path];
  queue.retry_after = std::max(queue.retry_after, until);
  queue.notes.clear();
}

std::optional<PendingHitNotes::Clock::time_point> PendingHitNotes::backed_off_until(const std::string& socket_path) {
  std::lock_guard lock(m_mutex);
  auto found = m_queues.find(socket_path);
  if (found == m_queues.end() || Clock::now() >= found->second.retry_after) return std::nullopt;
  return found->second.retry_after;
}

void PendingHitNotes::send_and_judge(const Queue& queue, std::chrono::milliseconds budget) {
  if (queue.notes.empty() || queue.pid != ::getpid() || Clock::now() < queue.retry_after) return;
  auto sent = send(queue, budget);
  if (sent) return;
  back_off(queue.daemon.socket_path, Clock::now() + back_off_for(sent.error()));
}

common::Result<void> PendingHitNotes::send(const Queue& queue, std::chrono::milliseconds budget) {
  // Rationale: all notes go in one write and their replies are read after it, within one budget:
  // the daemon answers each (it stops reading a connection whose peer has gone, so notes closed
  // on unanswered could be lost), and a stuck daemon costs the budget once, not once per note.
  const auto deadline = Clock::now() + budget;
  transport::ConnectOptions options = queue.daemon;
  options.connect_timeout = std::min(options.connect_timeout, budget);
  options.io_timeout = std::min(options.io_timeout, budget);
  options.restart_wait = {};
  auto connection = transport::UnixConnection::connect(options);
  JITCACHE_TRY(connection);
  std::vector<std::uint8_t> frames;
  std::uint32_t request_id = 1;
  for (const auto& note : queue.notes) {
    const proto::Payload payload = proto::encode(proto::HitNoteRequest{note});
    proto::FrameHeader header;
    header.op = proto::Op::hit_note;
    header.request_id = request_id++;
    header.payload_length = payload.size();
    const proto::HeaderBytes head = proto::encode_header(header);
    frames.insert(frames.end(), head.begin(), head.end());
    frames.insert(frames.end(), payload.begin(), payload.end());
  }
  JITCACHE_TRY(connection->send_raw(proto::Bytes(frames)));
  for (std::size_t i = 0; i < queue.notes.size(); ++i) {
    auto reply = connection->read_reply(deadline);
    JITCACHE_TRY(reply);
  }
  return {};
}

}  // namespace jitcache::client::loader
