// Writes a bundle (docs/bundle-format.md) as a stream: the head and header first, then one entry at a
// time, then the trailer with the digest of everything written and, with a signing key, its
// signature. Only the entry being written is held in memory.
// Thread safety: one writer per file; the sink is called on the caller's thread.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include <common/result.hpp>
#include <daemon/bundle/bundle_entry.hpp>
#include <daemon/bundle/sha256_stream.hpp>
#include <proto/digest.hpp>
#include <proto/signing.hpp>

namespace jitcache::daemon::bundle {

// Takes the next bytes of the file; an error ends the bundle.
using ByteSink = std::function<common::Result<void>(proto::Bytes)>;

// A sink that writes to a file descriptor, whole, through EINTR and short writes.
ByteSink fd_sink(int fd);

struct BundleSummary {
  std::uint64_t entries = 0;
  std::uint64_t bytes = 0;  // the whole file
  proto::Digest256 digest;  // the trailer's
  bool is_signed = false;
};

class BundleWriter {
 public:
  // Writes the head and the header. `signer` may be null: an unsigned bundle (its signer key and
  // signature are zero); otherwise header.signer_key is set from it. It must outlive the writer.
  static common::Result<BundleWriter> start(ByteSink sink, BundleHeader header, const proto::SigningKey* signer);

  // invalid_argument for an entry past header.entry_count or a field over its limit.
  common::Result<void> add(const BundleEntry& entry);
  // Writes the trailer; invalid_argument when fewer entries were added than the header declared.
  common::Result<BundleSummary> finish();

 private:
  BundleWriter(ByteSink sink, BundleHeader header, const proto::SigningKey* signer)
      : m_sink(std::move(sink)), m_header(std::move(header)), m_signer(signer) {}
  common::Result<void> emit(proto::Bytes bytes);

  ByteSink m_sink;
  BundleHeader m_header;
  const proto::SigningKey* m_signer;
  Sha256Stream m_hash;
  std::uint64_t m_entries = 0;
  std::uint64_t m_bytes = 0;
};

// The header's bytes (after the head), as the writer writes and the reader expects them.
std::vector<std::uint8_t> encode_header(const BundleHeader& header);

}  // namespace jitcache::daemon::bundle
