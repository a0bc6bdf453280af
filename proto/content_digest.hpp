// The content field of the cache key: a collision-resistant digest of the exact bytes the JIT would
// compile (docs/cache-key.md "The content digest (key schema 2)"), computed fast enough to sit on
// the path of every cache hit.
//
//   content = SHA-256( "jitcache-content" 0x00  ||  u64 length (little-endian)
//                      ||  SHA-256(chunk 0) || SHA-256(chunk 1) || ... )
//
// where the source is cut into k_content_chunk_size pieces (the last one shorter; none for an
// empty source). Every input goes through the same construction, so no input of one length can
// collide with another by construction, and finding two sources with one digest means finding a
// SHA-256 collision. Rationale: the chunks are hashed in parallel — a single SHA-256 runs at
// ~1.5 GB/s, so a 3 MB PTX module would spend ~2 ms of every hit hashing; on several cores the
// chunks take a fraction of that. docs/cache-key.md has the definition and a known answer.
// Thread safety: content_digest is a free function; it may start short-lived threads of its own
// and joins them before returning (where threads cannot be started it hashes on the calling thread).
#pragma once

#include <atomic>
#include <cstddef>
#include <optional>
#include <thread>
#include <vector>

#include <proto/digest.hpp>

namespace jitcache::proto {

inline constexpr std::size_t k_content_chunk_size = 512 * 1024;

Digest256 content_digest(Bytes source);

// content_digest(source) computed while the caller does something else (a client looks up by the
// fast key meanwhile: docs/cache-key.md "The fast key: look up first, verify after"). The
// constructor starts the hashing threads (one, which starts the rest as a binary tree: each thread
// starts up to two more before it hashes, and joins them); wait() lends the calling thread to the
// chunks still unclaimed, joins, and returns the digest. A source of one chunk or
// less is hashed at once on the calling thread: a thread would cost more than the hash.
// Thread safety: one owner; `source` must stay valid until wait() returns or the task is destroyed
// (which waits too). Not copyable or movable: the threads hold its address.
class ContentDigestTask {
 public:
  explicit ContentDigestTask(Bytes source);
  ~ContentDigestTask();
  ContentDigestTask(const ContentDigestTask&) = delete;
  ContentDigestTask& operator=(const ContentDigestTask&) = delete;

  Digest256 wait();

 private:
  void hash_chunks();
  void run_node(std::size_t node);  // node 1 is the root; node n starts nodes 2n and 2n + 1

  Bytes m_source;
  std::vector<Digest256> m_parts;
  std::atomic<std::size_t> m_next{0};
  std::size_t m_threads = 0;  // nodes of the tree
  std::thread m_root;         // started by the constructor; the tree's other threads join below it
  std::optional<Digest256> m_result;
};

}  // namespace jitcache::proto
