#include <proto/bundle_messages.hpp>

#include <algorithm>
#include <string>

#include <proto/key.hpp>
#include <proto/remote_check_messages.hpp>

namespace jitcache::proto {

namespace {

std::string_view cut(std::string_view s, std::size_t max) { return s.substr(0, std::min(s.size(), max)); }

common::Error malformed(std::string_view op, std::string message) {
  return common::make_error(common::ErrorCode::invalid_argument, std::string(op) + ": " + std::move(message));
}

common::Result<std::string> read_signer(ByteReader& r, std::string_view op) {
  JITCACHE_TRY_ASSIGN(const std::string_view text, r.str16("signer", k_signer_hex_length));
  if (!text.empty() && !is_signer_hex(text)) {
    return malformed(op, "signer is not " + std::to_string(k_signer_hex_length) + " lower-case hex digits");
  }
  return std::string(text);
}

}  // namespace

std::string_view import_target_name(ImportTarget target) { return name_in(k_import_targets, target); }

Payload encode(const ExportBundleRequest& m) {
  Payload out;
  ByteWriter w(out);
  w.str16(cut(m.arch, k_max_arch_length));
  w.u32(m.driver_api);
  w.str16(cut(m.driver_build, k_max_driver_build_length));
  w.i64(m.since_ms);
  const std::size_t count = std::min(m.key_ids.size(), k_max_export_key_ids);
  w.u32(static_cast<std::uint32_t>(count));
  for (std::size_t i = 0; i < count; ++i) w.digest(m.key_ids[i]);
  return out;
}

Payload encode(const ExportBundleReply& m) {
  Payload out;
  ByteWriter w(out);
  w.u64(m.entries);
  w.u64(m.bytes);
  w.str16(cut(m.signer, k_signer_hex_length));
  w.digest(m.digest);
  return out;
}

Payload encode(const ImportBundleRequest& m) { return Payload{static_cast<std::uint8_t>(m.target)}; }

Payload encode(const ImportBundleReply& m) {
  Payload out;
  ByteWriter w(out);
  w.u32(m.namespace_id);
  w.u64(m.entries);
  w.u64(m.imported);
  w.u64(m.skipped);
  w.str16(cut(m.signer, k_signer_hex_length));
  w.u8(m.signer_trusted ? 1 : 0);
  w.str16(cut(m.host, k_max_bundle_host_length));
  w.digest(m.digest);
  return out;
}

common::Result<ExportBundleRequest> decode_export_bundle_request(Bytes payload) {
  constexpr std::string_view op = "EXPORT_BUNDLE";
  ByteReader r(payload);
  ExportBundleRequest m;
  JITCACHE_TRY_ASSIGN(const std::string_view arch, r.str16("arch", k_max_arch_length));
  if (!arch.empty() && !is_valid_arch(arch)) {
    return malformed(op, "arch \"" + std::string(arch) + "\" is not of the form sm_<digits>[a|f]");
  }
  m.arch = arch;
  JITCACHE_TRY_ASSIGN(m.driver_api, r.u32("driver_api"));
  JITCACHE_TRY_ASSIGN(const std::string_view build, r.str16("driver_build", k_max_driver_build_length));
  if (std::any_of(build.begin(), build.end(), [](char c) { return c <= ' ' || c == 0x7f; })) {
    return malformed(op, "driver_build holds a space or a control character");
  }
  m.driver_build = build;
  JITCACHE_TRY_ASSIGN(m.since_ms, r.i64("since_ms"));
  if (m.since_ms < 0) return malformed(op, "since_ms is negative");
  JITCACHE_TRY_ASSIGN(const std::uint32_t count, r.u32("key_count"));
  if (count > k_max_export_key_ids) {
    return common::make_error(common::ErrorCode::too_large, std::string(op) + ": " + std::to_string(count) +
                                                                " key ids, at most " +
                                                                std::to_string(k_max_export_key_ids));
  }
  if (count * 32ull > r.remaining()) return malformed(op, "key_count runs past the payload");
  m.key_ids.reserve(count);
  for (std::uint32_t i = 0; i < count; ++i) {
    JITCACHE_TRY_ASSIGN(Digest256 id, r.digest("key_id"));
    m.key_ids.push_back(id);
  }
  JITCACHE_TRY(r.expect_end(op));
  return m;
}

common::Result<ExportBundleReply> decode_export_bundle_reply(Bytes payload) {
  constexpr std::string_view op = "EXPORT_BUNDLE reply";
  ByteReader r(payload);
  ExportBundleReply m;
  JITCACHE_TRY_ASSIGN(m.entries, r.u64("entries"));
  JITCACHE_TRY_ASSIGN(m.bytes, r.u64("bytes"));
  JITCACHE_TRY_ASSIGN(m.signer, read_signer(r, op));
  JITCACHE_TRY_ASSIGN(m.digest, r.digest("digest"));
  JITCACHE_TRY(r.expect_end(op));
  return m;
}

common::Result<ImportBundleRequest> decode_import_bundle_request(Bytes payload) {
  constexpr std::string_view op = "IMPORT_BUNDLE";
  ByteReader r(payload);
  JITCACHE_TRY_ASSIGN(const std::uint8_t raw, r.u8("target"));
  JITCACHE_TRY(r.expect_end(op));
  for (const auto& row : k_import_targets) {
    if (static_cast<std::uint8_t>(row.value) == raw) return ImportBundleRequest{row.value};
  }
  return malformed(op, "target " + std::to_string(raw) + " is not 0 (shared), 1 (own) or 2 (shared_restoring_removed)");
}

common::Result<ImportBundleReply> decode_import_bundle_reply(Bytes payload) {
  constexpr std::string_view op = "IMPORT_BUNDLE reply";
  ByteReader r(payload);
  ImportBundleReply m;
  JITCACHE_TRY_ASSIGN(m.namespace_id, r.u32("namespace"));
  JITCACHE_TRY_ASSIGN(m.entries, r.u64("entries"));
  JITCACHE_TRY_ASSIGN(m.imported, r.u64("imported"));
  JITCACHE_TRY_ASSIGN(m.skipped, r.u64("skipped"));
  JITCACHE_TRY_ASSIGN(m.signer, read_signer(r, op));
  JITCACHE_TRY_ASSIGN(const std::uint8_t trusted, r.u8("signer_trusted"));
  if (trusted > 1) return malformed(op, "signer_trusted is not 0 or 1");
  m.signer_trusted = trusted == 1;
  JITCACHE_TRY_ASSIGN(const std::string_view host, r.str16("host", k_max_bundle_host_length));
  m.host = host;
  JITCACHE_TRY_ASSIGN(m.digest, r.digest("digest"));
  JITCACHE_TRY(r.expect_end(op));
  return m;
}

}  // namespace jitcache::proto
