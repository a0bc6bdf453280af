#include <daemon/publish/publisher.hpp>

#include <spdlog/spdlog.h>

#include <proto/published_image.hpp>

#include <daemon/publish/publish_policy.hpp>
#include <daemon/publish/published_file.hpp>

namespace jitcache::daemon::publish {

namespace {
// Rationale: offers beyond this wait for the next hit of their entry, which offers them again; the
// queue holds images, so it is bounded rather than allowed to grow with a burst of new entries.
constexpr std::size_t k_max_queued = 64;
constexpr auto k_failure_log_interval = std::chrono::minutes(1);
}  // namespace

Publisher::Publisher(common::UniqueFd dir, std::string dir_path, store::PublishSource& source, PublishSettings settings)
    : m_dir(std::move(dir)), m_dir_path(std::move(dir_path)), m_store(source), m_settings(settings) {
  m_store.on_row_dropped([this](std::int64_t row_id) { row_dropped(row_id); });
  m_thread = std::thread([this] { run(); });
}

Publisher::~Publisher() {
  {
    std::lock_guard lock(m_mutex);
    m_stop = true;
  }
  m_wake.notify_all();
  m_thread.join();
  m_store.on_row_dropped(nullptr);
}

bool Publisher::published_locked(std::int64_t row_id, const proto::Digest256& fast_key_id) {
  const auto it = m_files.find(fast_key_id);
  if (it == m_files.end() || it->second.row_id != row_id) return false;
  m_lru.splice(m_lru.begin(), m_lru, it->second.lru);
  return true;
}

void Publisher::served(const store::Hit& hit, const proto::FastKey& fast_key, const proto::Digest256& fast_key_id) {
  if (publish_verdict(hit.info, true, m_settings.max_image_bytes) != PublishVerdict::publish) return;
  {
    std::lock_guard lock(m_mutex);
    if (published_locked(hit.row_id, fast_key_id)) return;
  }
  enqueue(Candidate{hit.row_id, fast_key, fast_key_id, hit.image});
}

void Publisher::stored(std::int64_t row_id, std::uint32_t namespace_id, const proto::FastKey& fast_key,
                       proto::Bytes image) {
  if (namespace_id != store::k_shared_namespace || image.size() > m_settings.max_image_bytes) return;
  auto copy = std::make_shared<store::ImageBuffer>(image.begin(), image.end());
  enqueue(Candidate{row_id, fast_key, proto::fast_key_id(fast_key), std::move(copy)});
}

void Publisher::note_used(const proto::Digest256& fast_key_id) {
  std::lock_guard lock(m_mutex);
  if (const auto it = m_files.find(fast_key_id); it != m_files.end()) {
    m_lru.splice(m_lru.begin(), m_lru, it->second.lru);
  }
}

void Publisher::row_dropped(std::int64_t row_id) {
  std::lock_guard lock(m_mutex);
  if (row_id == store::k_every_row) {
    while (!m_files.empty()) remove_locked(m_files.begin());
    return;
  }
  const auto row = m_by_row.find(row_id);
  if (row == m_by_row.end()) return;
  if (const auto file = m_files.find(row->second); file != m_files.end()) remove_locked(file);
}

void Publisher::remove_locked(std::map<proto::Digest256, File>::iterator file) {
  const std::string name = proto::published_file_name(file->first);
  if (auto removed = remove_published(m_dir.get(), name); !removed) {
    // Rationale: the index forgets the file all the same. A file that stays behind still holds a
    // verified image of its key, which clients check like any hit; it goes at the next start.
    spdlog::warn("publish: {}", removed.error().message);
  }
  m_bytes -= file->second.bytes;
  m_lru.erase(file->second.lru);
  m_by_row.erase(file->second.row_id);
  m_files.erase(file);
}

void Publisher::enqueue(Candidate candidate) {
  {
    std::lock_guard lock(m_mutex);
    if (m_stop || m_queue.size() >= k_max_queued || !m_queued.insert(candidate.fast_key_id).second) return;
    m_queue.push_back(std::move(candidate));
  }
  m_wake.notify_one();
}

void Publisher::wait_idle() {
  std::unique_lock lock(m_mutex);
  m_idle.wait(lock, [this] { return m_stop || (m_queue.empty() && !m_busy); });
}

PublisherStats Publisher::stats() const {
  std::lock_guard lock(m_mutex);
  return PublisherStats{m_files.size(), m_bytes, m_failures};
}

void Publisher::run() {
  std::unique_lock lock(m_mutex);
  for (;;) {
    m_wake.wait(lock, [this] { return m_stop || !m_queue.empty(); });
    if (m_stop) break;
    Candidate candidate = std::move(m_queue.front());
    m_queue.pop_front();
    m_busy = true;
    lock.unlock();
    publish(candidate);
    lock.lock();
    m_queued.erase(candidate.fast_key_id);
    m_busy = false;
    if (m_queue.empty()) m_idle.notify_all();
  }
  m_idle.notify_all();
}

void Publisher::count_failure(const std::string& message) {
  std::lock_guard lock(m_mutex);
  ++m_failures;
  const auto now = std::chrono::steady_clock::now();
  if (m_last_failure_log != std::chrono::steady_clock::time_point{} &&
      now - m_last_failure_log < k_failure_log_interval) {
    ++m_failures_unlogged;
    return;
  }
  spdlog::warn("publish: cannot publish an image in {}: {}{}", m_dir_path, message,
               m_failures_unlogged == 0
                   ? std::string()
                   : " (and " + std::to_string(m_failures_unlogged) + " more failures not logged)");
  m_last_failure_log = now;
  m_failures_unlogged = 0;
}

void Publisher::publish(const Candidate& candidate) {
  // The entry's own metadata, read now: what a LOOKUP of it would send.
  auto entry = m_store.publishable_entry(candidate.row_id, candidate.fast_key_id);
  if (!entry) {
    count_failure(entry.error().message);
    return;
  }
  if (!entry->has_value()) return;  // removed, replaced, quarantined or never shared since offered
  const proto::EntryInfo& info = **entry;
  const proto::Bytes image(*candidate.image);
  if (publish_verdict(info, true, m_settings.max_image_bytes) != PublishVerdict::publish ||
      !proto::same_fields_but_content(candidate.fast_key, info.key) || image.size() != info.raw_size ||
      proto::xxh3_128(image) != info.checksum) {
    return;  // the row holds another image now: its own offer will come
  }
  const proto::Payload head =
      proto::encode_published_image_head(candidate.fast_key, info, static_cast<std::uint32_t>(image.size()));
  if (head.size() + image.size() > m_settings.budget_bytes) return;
  auto temp =
      write_temporary(m_dir.get(), proto::published_file_name(candidate.fast_key_id), proto::Bytes(head), image);
  if (!temp) {
    count_failure(temp.error().message);
    return;
  }

  std::lock_guard lock(m_mutex);
  // Rationale: asked again under the lock that row_dropped() takes after every write commits, so a
  // row dropped after the first check either fails this one or has its file removed right after.
  auto still = m_store.publishable_entry(candidate.row_id, candidate.fast_key_id);
  if (!still || !still->has_value() || (*still)->checksum != info.checksum) {
    discard(m_dir.get(), *temp);
    return;
  }
  if (const auto old = m_files.find(candidate.fast_key_id); old != m_files.end()) remove_locked(old);
  while (!m_lru.empty() && m_bytes + temp->bytes > m_settings.budget_bytes) remove_locked(m_files.find(m_lru.back()));
  if (auto renamed = rename_into_place(m_dir.get(), *temp); !renamed) {
    ++m_failures;
    spdlog::warn("publish: {}", renamed.error().message);
    return;
  }
  m_lru.push_front(candidate.fast_key_id);
  m_files.emplace(candidate.fast_key_id, File{candidate.row_id, temp->bytes, m_lru.begin()});
  m_by_row[candidate.row_id] = candidate.fast_key_id;
  m_bytes += temp->bytes;
}

}  // namespace jitcache::daemon::publish
