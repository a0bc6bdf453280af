#include <daemon/bundle/bundle_writer.hpp>

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>

#include <proto/byte_io.hpp>
#include <proto/messages.hpp>

namespace jitcache::daemon::bundle {

using common::ErrorCode;
using common::make_error;

bool BundleHeader::is_signed() const {
  return std::any_of(signer_key.begin(), signer_key.end(), [](std::uint8_t b) { return b != 0; });
}

ByteSink fd_sink(int fd) {
  return [fd](proto::Bytes bytes) -> common::Result<void> {
    std::size_t done = 0;
    while (done < bytes.size()) {
      const ssize_t put = ::write(fd, bytes.data() + done, bytes.size() - done);
      if (put < 0 && errno == EINTR) continue;
      if (put < 0) {
        return make_error(errno == ENOSPC ? ErrorCode::no_space : ErrorCode::io,
                          std::string("writing the bundle: ") + std::strerror(errno));
      }
      done += static_cast<std::size_t>(put);
    }
    return {};
  };
}

std::vector<std::uint8_t> encode_header(const BundleHeader& header) {
  std::vector<std::uint8_t> out;
  proto::ByteWriter w(out);
  w.str16(header.host.substr(0, k_max_host_length));
  w.i64(header.created_at_ms);
  w.u64(header.entry_count);
  w.raw(proto::Bytes(header.signer_key));
  w.str16(header.producer.substr(0, k_max_bundle_producer_length));
  return out;
}

common::Result<BundleWriter> BundleWriter::start(ByteSink sink, BundleHeader header, const proto::SigningKey* signer) {
  if (header.entry_count > k_max_bundle_entries) {
    return make_error(ErrorCode::too_large, std::to_string(header.entry_count) + " entries: a bundle holds at most " +
                                                std::to_string(k_max_bundle_entries));
  }
  header.signer_key = {};
  if (signer != nullptr) header.signer_key = signer->public_key().raw;
  BundleWriter writer(std::move(sink), std::move(header), signer);
  const std::vector<std::uint8_t> body = encode_header(writer.m_header);
  std::vector<std::uint8_t> head;
  proto::ByteWriter w(head);
  w.raw(proto::Bytes(k_bundle_magic));
  w.u16(k_bundle_format_version);
  w.u16(0);
  w.u32(static_cast<std::uint32_t>(body.size()));
  w.raw(proto::Bytes(body));
  JITCACHE_TRY(writer.emit(proto::Bytes(head)));
  return writer;
}

common::Result<void> BundleWriter::emit(proto::Bytes bytes) {
  JITCACHE_TRY(m_sink(bytes));
  m_hash.update(bytes);
  m_bytes += bytes.size();
  return {};
}

common::Result<void> BundleWriter::add(const BundleEntry& entry) {
  if (m_entries == m_header.entry_count) {
    return make_error(ErrorCode::invalid_argument,
                      "more entries than the header's " + std::to_string(m_header.entry_count));
  }
  if (entry.producer.size() > proto::k_max_producer_length) {
    return make_error(ErrorCode::invalid_argument, "an entry's producer is longer than its limit");
  }
  // The fields around the two blobs, encoded apart so the blobs go from the entry's buffers.
  std::vector<std::uint8_t> fields;
  proto::ByteWriter w(fields);
  w.u8(static_cast<std::uint8_t>(entry.origin));
  proto::encode_key(w, entry.key);
  w.checksum(entry.content_fast);
  w.str16(entry.producer);
  w.u64(entry.compile_time_us);
  w.i64(entry.created_at_ms);
  w.u8(entry.codec);
  w.u64(entry.raw_size);
  w.checksum(entry.checksum);
  w.u64(entry.image.size());
  std::vector<std::uint8_t> source_fields;
  proto::ByteWriter s(source_fields);
  s.u8(entry.source.empty() ? k_codec_raw : k_codec_zstd);
  s.u64(entry.source.empty() ? 0 : entry.source_raw_size);
  s.u64(entry.source.size());

  std::vector<std::uint8_t> length;
  proto::ByteWriter l(length);
  l.u64(fields.size() + entry.image.size() + source_fields.size() + entry.source.size());
  JITCACHE_TRY(emit(proto::Bytes(length)));
  JITCACHE_TRY(emit(proto::Bytes(fields)));
  JITCACHE_TRY(emit(proto::Bytes(entry.image)));
  JITCACHE_TRY(emit(proto::Bytes(source_fields)));
  JITCACHE_TRY(emit(proto::Bytes(entry.source)));
  ++m_entries;
  return {};
}

common::Result<BundleSummary> BundleWriter::finish() {
  if (m_entries != m_header.entry_count) {
    return make_error(ErrorCode::invalid_argument, "the header declared " + std::to_string(m_header.entry_count) +
                                                       " entries, " + std::to_string(m_entries) + " were written");
  }
  std::vector<std::uint8_t> trailer;
  proto::ByteWriter w(trailer);
  w.raw(proto::Bytes(k_trailer_magic));
  w.u64(m_entries);
  JITCACHE_TRY(emit(proto::Bytes(trailer)));
  BundleSummary summary;
  summary.digest = m_hash.digest();
  proto::Signature signature{};
  if (m_signer != nullptr) {
    std::string message(k_signature_context);
    message.append(reinterpret_cast<const char*>(summary.digest.bytes.data()), summary.digest.bytes.size());
    signature = m_signer->sign(message);
  }
  JITCACHE_TRY(emit(proto::Bytes(summary.digest.bytes)));
  JITCACHE_TRY(emit(proto::Bytes(signature)));
  summary.entries = m_entries;
  summary.bytes = m_bytes;
  summary.is_signed = m_signer != nullptr;
  return summary;
}

}  // namespace jitcache::daemon::bundle
