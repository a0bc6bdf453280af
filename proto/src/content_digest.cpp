#include <jitcache/proto/content_digest.hpp>

#include <algorithm>
#include <cstdint>
#include <system_error>
#include <thread>
#include <vector>

namespace jitcache::proto {

namespace {

// Rationale: beyond this, more threads cost more to start than they save on the modules seen in
// practice (a 3 MB PTX is 7 chunks).
constexpr unsigned k_max_threads = 8;

void hash_stripe(Bytes source, std::vector<Digest256>& parts, unsigned first, unsigned stride) {
  for (std::size_t i = first; i < parts.size(); i += stride) {
    const std::size_t offset = i * k_content_chunk_size;
    parts[i] = sha256(source.subspan(offset, std::min(k_content_chunk_size, source.size() - offset)));
  }
}

}  // namespace

Digest256 content_digest(Bytes source) {
  const std::size_t chunks = (source.size() + k_content_chunk_size - 1) / k_content_chunk_size;
  std::vector<Digest256> parts(chunks);

  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  const unsigned stripes = static_cast<unsigned>(std::min<std::size_t>({chunks, cores, k_max_threads}));
  std::vector<std::thread> helpers;
  unsigned started = 1;
  for (unsigned stripe = 1; stripe < stripes; ++stripe) {
    try {
      helpers.emplace_back(hash_stripe, source, std::ref(parts), stripe, stripes);
      ++started;
    } catch (const std::system_error&) {
      break;  // no more threads: the calling thread takes the remaining stripes below
    }
  }
  hash_stripe(source, parts, 0, stripes);
  for (unsigned stripe = started; stripe < stripes; ++stripe) hash_stripe(source, parts, stripe, stripes);
  for (auto& helper : helpers) helper.join();

  static constexpr char k_domain[] = "jitcache-content";  // with its NUL: 17 bytes
  std::vector<std::uint8_t> preimage(k_domain, k_domain + sizeof(k_domain));
  std::uint64_t length = source.size();
  for (int i = 0; i < 8; ++i) preimage.push_back(static_cast<std::uint8_t>(length >> (8 * i)));
  for (const Digest256& part : parts) preimage.insert(preimage.end(), part.bytes.begin(), part.bytes.end());
  return sha256(Bytes(preimage));
}

}  // namespace jitcache::proto
