#include <proto/content_digest.hpp>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <system_error>
#include <thread>
#include <vector>

namespace jitcache::proto {

namespace {

// Rationale: beyond this, more threads cost more to start than they save on the modules seen in
// practice (a 3 MB PTX is 7 chunks).
constexpr unsigned k_max_threads = 8;

}  // namespace

// Rationale: chunks are handed out one at a time rather than in fixed stripes, because starting a
// thread costs tens of microseconds: the threads started first, and the calling thread once it is
// in wait(), take the chunks the late ones would have.
void ContentDigestTask::hash_chunks() {
  for (std::size_t i = m_next++; i < m_parts.size(); i = m_next++) {
    const std::size_t offset = i * k_content_chunk_size;
    m_parts[i] = sha256(m_source.subspan(offset, std::min(k_content_chunk_size, m_source.size() - offset)));
  }
}

// Rationale: a tree, because starting a thread is what a fresh process pays most for here (on the
// H200 host a 3.2 MB PTX took up to 0.9-2.1 ms in a fresh process against 0.4-0.5 ms warm:
// docs/benchmarks.md "The hit path at the limit"); one thread starting the others one after another
// made the last start eight thread starts late, a tree four.
void ContentDigestTask::run_node(std::size_t node) {
  std::thread children[2];
  for (std::size_t i = 0; i < 2; ++i) {
    const std::size_t child = 2 * node + i;
    if (child > m_threads || m_next >= m_parts.size()) break;
    try {
      children[i] = std::thread([this, child] { run_node(child); });
    } catch (const std::system_error&) {
      break;  // no more threads: the others take what is left
    }
  }
  hash_chunks();
  for (auto& child : children) {
    if (child.joinable()) child.join();
  }
}

ContentDigestTask::ContentDigestTask(Bytes source)
    : m_source(source), m_parts((source.size() + k_content_chunk_size - 1) / k_content_chunk_size) {
  if (m_parts.size() <= 1) return;
  // The caller is busy elsewhere until wait(), so every chunk may get a thread of its own, within
  // the cores and k_max_threads. Rationale: the caller starts one thread and that one the others:
  // starting a thread costs 20-50 us (more on a busy machine), which the caller would otherwise pay
  // once per chunk before it can send its lookup.
  const std::size_t cores = std::max(1u, std::thread::hardware_concurrency());
  m_threads = std::min<std::size_t>({m_parts.size(), cores, k_max_threads});
  try {
    m_root = std::thread([this] { run_node(1); });
  } catch (const std::system_error&) {
    // No thread at all: wait() hashes every chunk on the calling thread.
  }
}

ContentDigestTask::~ContentDigestTask() {
  if (m_root.joinable()) m_root.join();
}

Digest256 ContentDigestTask::wait() {
  if (m_result) return *m_result;
  hash_chunks();
  if (m_root.joinable()) m_root.join();  // which joins the tree below it

  static constexpr char k_domain[] = "jitcache-content";  // with its NUL: 17 bytes
  std::vector<std::uint8_t> preimage(k_domain, k_domain + sizeof(k_domain));
  std::uint64_t length = m_source.size();
  for (int i = 0; i < 8; ++i) preimage.push_back(static_cast<std::uint8_t>(length >> (8 * i)));
  for (const Digest256& part : m_parts) preimage.insert(preimage.end(), part.bytes.begin(), part.bytes.end());
  m_result = sha256(Bytes(preimage));
  return *m_result;
}

Digest256 content_digest(Bytes source) {
  ContentDigestTask task(source);
  return task.wait();
}

}  // namespace jitcache::proto
