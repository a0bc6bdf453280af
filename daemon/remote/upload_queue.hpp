// UploadQueue: the entries waiting to go up to the remotes, bounded in entries and in bytes so a
// slow or dead remote makes the daemon drop uploads (counted: upload_drops), never hold memory
// without bound or make a compile wait. One thread drains it (RemoteTier).
// Thread safety: push, pop and stop may be called from any thread.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <mutex>
#include <optional>
#include <vector>

#include <daemon/remote/record/index_record.hpp>

namespace jitcache::daemon::remote {

// One entry to upload: the record to sign (its signer is set when signed), the raw image, and the
// source it was compiled from (empty when there is none, e.g. a trusted PUT).
struct Upload {
  IndexRecord record;
  std::vector<std::uint8_t> image;
  std::vector<std::uint8_t> source;

  std::uint64_t bytes() const { return image.size() + source.size(); }
};

class UploadQueue {
 public:
  UploadQueue(std::size_t max_entries, std::uint64_t max_bytes) : m_max_entries(max_entries), m_max_bytes(max_bytes) {}

  // False when the queue is full (or stopped): the upload is dropped.
  bool push(Upload upload);
  // Blocks until an upload is queued or the queue stops (nullopt).
  std::optional<Upload> pop();
  // Wakes pop() for good; what is still queued is dropped and returned as a count.
  std::size_t stop();
  std::size_t size() const;

 private:
  const std::size_t m_max_entries;
  const std::uint64_t m_max_bytes;
  mutable std::mutex m_mutex;
  std::condition_variable m_ready;
  std::deque<Upload> m_queue;
  std::uint64_t m_bytes = 0;
  bool m_stopped = false;
};

}  // namespace jitcache::daemon::remote
