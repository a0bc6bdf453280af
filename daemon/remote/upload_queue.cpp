#include <daemon/remote/upload_queue.hpp>

namespace jitcache::daemon::remote {

bool UploadQueue::push(Upload upload) {
  {
    std::lock_guard lock(m_mutex);
    if (m_stopped || m_queue.size() >= m_max_entries || m_bytes + upload.bytes() > m_max_bytes) return false;
    m_bytes += upload.bytes();
    m_queue.push_back(std::move(upload));
  }
  m_ready.notify_one();
  return true;
}

std::optional<Upload> UploadQueue::pop() {
  std::unique_lock lock(m_mutex);
  m_ready.wait(lock, [&] { return m_stopped || !m_queue.empty(); });
  if (m_stopped) return std::nullopt;
  Upload upload = std::move(m_queue.front());
  m_queue.pop_front();
  m_bytes -= upload.bytes();
  return upload;
}

std::size_t UploadQueue::stop() {
  std::size_t dropped = 0;
  {
    std::lock_guard lock(m_mutex);
    m_stopped = true;
    dropped = m_queue.size();
    m_queue.clear();
    m_bytes = 0;
  }
  m_ready.notify_all();
  return dropped;
}

std::size_t UploadQueue::size() const {
  std::lock_guard lock(m_mutex);
  return m_queue.size();
}

}  // namespace jitcache::daemon::remote
