#include <daemon/remote/record/index_record_codec.hpp>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include <common/result.hpp>
#include <proto/byte_io.hpp>
#include <proto/printable_text.hpp>

namespace jitcache::daemon::remote {

namespace {

// `text` as a record holds it: printable, at most `limit` bytes, cut between characters.
std::string record_text(std::string_view text, std::size_t limit) {
  std::string out;
  std::size_t at = 0;
  while (at < text.size()) {
    const proto::Utf8Sequence sequence = proto::read_utf8(text, at);
    const bool printable = sequence.valid && proto::is_printable_code_point(sequence.code_point);
    const std::size_t written = printable ? sequence.length : 1;
    if (out.size() + written > limit) break;
    if (printable) {
      out.append(text.substr(at, sequence.length));
    } else {
      out.push_back('?');
    }
    at += sequence.length;
  }
  return out;
}

common::Result<std::string> read_text(proto::ByteReader& reader, std::string_view field, std::size_t limit) {
  JITCACHE_TRY_ASSIGN(const std::string_view text, reader.str16(field, limit));
  if (const std::size_t bad = proto::first_unprintable(text); bad != std::string_view::npos) {
    return common::make_error(common::ErrorCode::invalid_argument, "field " + std::string(field) +
                                                                       " is not printable text (at byte " +
                                                                       std::to_string(bad) + ")");
  }
  return std::string(text);
}

common::Result<ParsedIndexRecord> parse_fields(std::string_view bytes) {
  proto::ByteReader reader(proto::as_bytes(bytes));
  JITCACHE_TRY_ASSIGN(const std::uint32_t magic, reader.u32("magic"));
  static_cast<void>(magic);  // compared as bytes by the caller
  JITCACHE_TRY_ASSIGN(const std::uint16_t version, reader.u16("version"));
  if (version != k_index_record_version) {
    return common::make_error(common::ErrorCode::unsupported, "index record version " + std::to_string(version) +
                                                                  "; this jitcached reads version " +
                                                                  std::to_string(k_index_record_version));
  }
  ParsedIndexRecord out;
  IndexRecord& r = out.record;
  JITCACHE_TRY_ASSIGN(r.key.key_schema, reader.u16("key_schema"));
  JITCACHE_TRY_ASSIGN(r.key.content, reader.digest("content"));
  JITCACHE_TRY_ASSIGN(r.key.arch, read_text(reader, "arch", proto::k_max_arch_length));
  JITCACHE_TRY_ASSIGN(r.key.driver_api, reader.u32("driver_api"));
  JITCACHE_TRY_ASSIGN(r.key.driver_build, read_text(reader, "driver_build", proto::k_max_driver_build_length));
  JITCACHE_TRY_ASSIGN(r.key.options, read_text(reader, "options", proto::k_max_options_length));
  JITCACHE_TRY_ASSIGN(r.content_fast, reader.checksum("content_fast"));
  JITCACHE_TRY_ASSIGN(r.image_digest, reader.digest("image_digest"));
  JITCACHE_TRY_ASSIGN(r.image_size, reader.u64("image_size"));
  JITCACHE_TRY_ASSIGN(r.object_size, reader.u64("object_size"));
  JITCACHE_TRY_ASSIGN(r.producer, read_text(reader, "producer", k_max_record_text_length));
  JITCACHE_TRY_ASSIGN(r.compile_time_us, reader.u64("compile_time_us"));
  JITCACHE_TRY_ASSIGN(r.created_at_ms, reader.i64("created_at_ms"));
  JITCACHE_TRY_ASSIGN(r.host, read_text(reader, "host", k_max_record_text_length));
  if (r.image_size == 0 || r.object_size == 0) {
    return common::make_error(common::ErrorCode::invalid_argument, "image_size and object_size must not be 0");
  }

  // The signer id and the signature end the record, at fixed offsets from its end.
  constexpr std::size_t tail = k_signer_bytes + k_signature_bytes;
  if (reader.remaining() < tail) {
    return common::make_error(common::ErrorCode::invalid_argument,
                              "the record ends inside its signer id or signature (" +
                                  std::to_string(reader.remaining()) + " of " + std::to_string(tail) + " bytes)");
  }
  if (reader.remaining() > tail) {
    return common::make_error(common::ErrorCode::invalid_argument,
                              std::to_string(reader.remaining() - tail) + " unexpected bytes after the signature");
  }
  const std::size_t signer_at = bytes.size() - tail;
  std::copy_n(bytes.begin() + static_cast<std::ptrdiff_t>(signer_at), k_signer_bytes, r.signer.begin());
  std::copy_n(bytes.begin() + static_cast<std::ptrdiff_t>(signer_at + k_signer_bytes), k_signature_bytes,
              out.signature.begin());
  out.body = bytes.substr(0, bytes.size() - k_signature_bytes);
  return out;
}

}  // namespace

std::string encode_record_body(const IndexRecord& record) {
  std::vector<std::uint8_t> bytes;
  bytes.reserve(512);
  proto::ByteWriter writer(bytes);
  writer.raw(proto::as_bytes(k_index_record_magic));
  writer.u16(k_index_record_version);
  writer.u16(record.key.key_schema);
  writer.digest(record.key.content);
  writer.str16(record_text(record.key.arch, proto::k_max_arch_length));
  writer.u32(record.key.driver_api);
  writer.str16(record_text(record.key.driver_build, proto::k_max_driver_build_length));
  writer.str16(record_text(record.key.options, proto::k_max_options_length));
  writer.checksum(record.content_fast);
  writer.digest(record.image_digest);
  writer.u64(record.image_size);
  writer.u64(record.object_size);
  writer.str16(record_text(record.producer, k_max_record_text_length));
  writer.u64(record.compile_time_us);
  writer.i64(record.created_at_ms);
  writer.str16(record_text(record.host, k_max_record_text_length));
  writer.raw(proto::Bytes(record.signer));
  return std::string(bytes.begin(), bytes.end());
}

std::string record_signed_message(std::string_view body) {
  std::string message;
  message.reserve(k_index_record_domain.size() + body.size());
  message.append(k_index_record_domain);
  message.append(body);
  return message;
}

std::variant<ParsedIndexRecord, Rejected> parse_index_record(std::string_view bytes) {
  const auto malformed = [](std::string message) {
    return Rejected{Rejection::malformed_record, "malformed index record: " + std::move(message)};
  };
  // Rationale: refused before anything is read, so a remote that returns a huge value costs no
  // parsing (the backend already read no more than k_max_index_record_bytes of it).
  if (bytes.size() > k_max_index_record_bytes) {
    return malformed(std::to_string(bytes.size()) + " bytes, more than version " +
                     std::to_string(k_index_record_version) + "'s longest (" +
                     std::to_string(k_max_index_record_bytes) + ")");
  }
  if (!bytes.starts_with(k_index_record_magic)) return malformed("it does not start with \"JCIR\"");
  auto parsed = parse_fields(bytes);
  if (!parsed) return malformed(parsed.error().message);
  return std::move(parsed).value();
}

}  // namespace jitcache::daemon::remote
