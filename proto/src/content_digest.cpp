#include <jitcache/proto/content_digest.hpp>

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

// Hashes chunks until none is left. Rationale: chunks are handed out one at a time rather than in
// fixed stripes, because starting a thread costs tens of microseconds: the threads started first,
// and the calling thread once it has started the others, take the chunks the late ones would have.
void hash_chunks(Bytes source, std::vector<Digest256>& parts, std::atomic<std::size_t>& next) {
  for (std::size_t i = next++; i < parts.size(); i = next++) {
    const std::size_t offset = i * k_content_chunk_size;
    parts[i] = sha256(source.subspan(offset, std::min(k_content_chunk_size, source.size() - offset)));
  }
}

}  // namespace

Digest256 content_digest(Bytes source) {
  const std::size_t chunks = (source.size() + k_content_chunk_size - 1) / k_content_chunk_size;
  std::vector<Digest256> parts(chunks);
  std::atomic<std::size_t> next{0};

  // Threads in all, this one included: no more than chunks, cores or k_max_threads.
  const std::size_t cores = std::max(1u, std::thread::hardware_concurrency());
  const std::size_t threads = std::min<std::size_t>({chunks, cores, k_max_threads});
  std::vector<std::thread> helpers;
  for (std::size_t i = 1; i < threads && next < chunks; ++i) {
    try {
      helpers.emplace_back(hash_chunks, source, std::ref(parts), std::ref(next));
    } catch (const std::system_error&) {
      break;  // no more threads: the calling thread takes what is left
    }
  }
  hash_chunks(source, parts, next);
  for (auto& helper : helpers) helper.join();

  static constexpr char k_domain[] = "jitcache-content";  // with its NUL: 17 bytes
  std::vector<std::uint8_t> preimage(k_domain, k_domain + sizeof(k_domain));
  std::uint64_t length = source.size();
  for (int i = 0; i < 8; ++i) preimage.push_back(static_cast<std::uint8_t>(length >> (8 * i)));
  for (const Digest256& part : parts) preimage.insert(preimage.end(), part.bytes.begin(), part.bytes.end());
  return sha256(Bytes(preimage));
}

}  // namespace jitcache::proto
