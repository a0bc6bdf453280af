// The publisher: keeps the published directory (published_dir.hpp) in step with the store, so that
// a client finds a shared entry's LOOKUP reply in a file and needs no round trip for a hit
// (docs/architecture.md "Published images").
//
// - Offered entries (a LOOKUP hit by fast key, a trusted PUT, a compiled image) are queued and
//   written by the publisher's own thread, never on a reply's path; an offer of an entry already
//   published only refreshes its place in the least-recently-used order.
// - Before a file is renamed into place, the store is asked, under the publisher's lock, whether
//   the row is still a live shared entry with that fast key and image. The store tells the
//   publisher of every row it replaces or deletes (store::RowDropped) after that write commits,
//   and the publisher removes the row's file under the same lock. So in every interleaving a file
//   is either never published or removed: a removed, quarantined, replaced or evicted entry leaves
//   no file behind.
// - The files stay within publish_size bytes: the least recently used (published, served by
//   LOOKUP, or noted by HIT_NOTE) go first.
// - A failure to write (a full tmpfs, EACCES) is counted and logged at most once a minute; it never
//   fails a request.
//
// Thread safety: every public method may be called from any thread. The lock is held for index
// updates, renames and unlinks and one store read per file published, never for writing a file.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <unordered_map>

#include <proto/key.hpp>

#include <common/unique_fd.hpp>
#include <daemon/store/publish_source.hpp>
#include <daemon/store/store.hpp>

namespace jitcache::daemon::publish {

struct PublishSettings {
  // Rationale: the directory lives on the socket's filesystem, usually a tmpfs (RAM), so its size
  // is bounded apart from the store's. 64 MiB holds the small and mid-sized modules (a few KB to a
  // few hundred KB each) and a handful of large ones. Large images are published too: a socket hit
  // of cub's 1.6 MB image paid a connection, a HELLO and a descriptor, about a millisecond over
  // the driver's own load, where a mapped published file pays none of it (docs/benchmarks.md "The
  // hit path at the limit"). 8 MiB, an eighth of the budget, keeps one huge image from pushing
  // out most of the small ones.
  std::uint64_t budget_bytes = 64ull << 20;
  std::uint64_t max_image_bytes = 8ull << 20;
};

struct PublisherStats {
  std::uint64_t published_images = 0;  // files now
  std::uint64_t published_bytes = 0;   // their bytes now
  std::uint64_t publish_failures = 0;  // files that could not be written, since start
};

class Publisher {
 public:
  // Registers itself as the store's RowDropped listener (and unregisters on destruction), and
  // starts its thread. `dir` is the prepared directory (prepare_published_dir).
  // `source`: the store's publish source (publish_source.hpp), the only part of the store it uses.
  Publisher(common::UniqueFd dir, std::string dir_path, store::PublishSource& source, PublishSettings settings);
  ~Publisher();
  Publisher(const Publisher&) = delete;
  Publisher& operator=(const Publisher&) = delete;

  // A LOOKUP by fast key served `hit`: queued for publishing unless it is published already (then
  // its use is noted) or the policy (publish_policy.hpp) says no. Costs a lock and a map lookup.
  void served(const store::Hit& hit, const proto::FastKey& fast_key, const proto::Digest256& fast_key_id);
  // An image just stored in row `row_id` of namespace `namespace_id` (a PUT or a compiled image):
  // copied and queued when it may be published.
  void stored(std::int64_t row_id, std::uint32_t namespace_id, const proto::FastKey& fast_key, proto::Bytes image);
  // A client loaded the published copy (HIT_NOTE): the file is used.
  void note_used(const proto::Digest256& fast_key_id);
  // store::RowDropped: removes the row's file, if it has one.
  void row_dropped(std::int64_t row_id);

  PublisherStats stats() const;
  const std::string& dir_path() const { return m_dir_path; }
  // Waits until every offer queued so far has been handled (tests, and a clean shutdown).
  void wait_idle();

 private:
  struct Candidate {
    std::int64_t row_id = 0;
    proto::FastKey fast_key;
    proto::Digest256 fast_key_id;
    std::shared_ptr<const store::ImageBuffer> image;
  };
  struct File {
    std::int64_t row_id = 0;
    std::uint64_t bytes = 0;
    std::list<proto::Digest256>::iterator lru;
  };

  void enqueue(Candidate candidate);
  void run();
  void publish(const Candidate& candidate);
  // Under m_mutex.
  bool published_locked(std::int64_t row_id, const proto::Digest256& fast_key_id);
  void remove_locked(std::map<proto::Digest256, File>::iterator file);
  void count_failure(const std::string& message);

  common::UniqueFd m_dir;
  std::string m_dir_path;
  store::PublishSource& m_store;
  const PublishSettings m_settings;

  mutable std::mutex m_mutex;
  std::condition_variable m_wake;
  std::condition_variable m_idle;
  std::deque<Candidate> m_queue;
  std::set<proto::Digest256> m_queued;
  bool m_busy = false;
  bool m_stop = false;
  std::map<proto::Digest256, File> m_files;
  std::unordered_map<std::int64_t, proto::Digest256> m_by_row;
  std::list<proto::Digest256> m_lru;  // most recently used first
  std::uint64_t m_bytes = 0;
  std::uint64_t m_failures = 0;
  std::uint64_t m_failures_unlogged = 0;
  std::chrono::steady_clock::time_point m_last_failure_log{};
  std::thread m_thread;
};

}  // namespace jitcache::daemon::publish
