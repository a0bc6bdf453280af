#include <client/src/loader/pending_hit_notes.hpp>

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <utility>

namespace jitcache::client::loader {

namespace {
constexpr std::chrono::milliseconds k_note_timeout{200};
}  // namespace

PendingHitNotes& PendingHitNotes::instance() {
  static PendingHitNotes notes;
  return notes;
}

PendingHitNotes::~PendingHitNotes() {
  std::map<std::string, Queue> queues;
  {
    std::lock_guard lock(m_mutex);
    queues.swap(m_queues);
  }
  for (auto& [socket, queue] : queues) send(std::move(queue));
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
    queue.notes.push_back(fast_key);
    if (queue.notes.size() < k_batch) return;
    full = std::exchange(queue, Queue{daemon, ::getpid(), {}});
  }
  send(std::move(full));
}

void PendingHitNotes::flush(const std::string& socket_path) {
  Queue queue;
  {
    std::lock_guard lock(m_mutex);
    auto found = m_queues.find(socket_path);
    if (found == m_queues.end()) return;
    queue = std::move(found->second);
    m_queues.erase(found);
  }
  send(std::move(queue));
}

void PendingHitNotes::send(Queue queue) {
  if (queue.notes.empty() || queue.pid != ::getpid()) return;
  // Rationale: each note is answered before the next goes (a daemon stops reading a connection
  // whose peer has gone, so unanswered notes after a close would be lost), within a short wait so
  // that a stuck daemon delays an exit by at most that.
  transport::ConnectOptions options = queue.daemon;
  options.connect_timeout = std::min(options.connect_timeout, k_note_timeout);
  options.io_timeout = std::min(options.io_timeout, k_note_timeout);
  auto client = transport::DaemonClient::connect(options);
  if (!client) return;
  for (const auto& note : queue.notes) {
    if (!client->hit_note(note)) return;
  }
}

}  // namespace jitcache::client::loader
