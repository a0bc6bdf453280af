#include <proto/messages.hpp>

#include <algorithm>
#include <string>
#include <utility>

#include <common/result.hpp>
#include <proto/request_fields.hpp>

// Rationale: every field read can fail, and spelling out "if (!x) return x.error();" for each of the
// ~20 fields of an entry would bury the field order, which is the thing a reader compares with
// PROTOCOL.md. The macro is local to this file.
#define JC_READ(var, expr)                        \
  auto var##_result = (expr);                     \
  if (!var##_result) return var##_result.error(); \
  auto var = std::move(*var##_result) /* moved, not copied: a decoded string is one allocation */

namespace jitcache::proto {

namespace {

template <class M, class F>
Payload encode_with(const M& m, F&& fill) {
  Payload out;
  ByteWriter w(out);
  fill(w, m);
  return out;
}

std::string_view cut(std::string_view s, std::size_t max) { return s.substr(0, std::min(s.size(), max)); }

common::Result<std::string> read_key_id_prefix(ByteReader& r, bool allow_empty) {
  JC_READ(prefix, r.str16("key_id_prefix", 64));
  if (!is_valid_key_id_prefix(prefix, allow_empty)) {
    // The prefix is not echoed: it is the client's raw bytes and would reach the daemon's log.
    return common::make_error(common::ErrorCode::invalid_argument,
                              "key_id_prefix (" + std::to_string(prefix.size()) + " bytes) must be " +
                                  std::to_string(k_min_key_id_prefix_length) + " to 64 hex digits");
  }
  return std::string(prefix);
}

template <class T>
common::Result<T> finish(ByteReader& r, T value, std::string_view what) {
  JITCACHE_TRY(r.expect_end(what));
  return value;
}

}  // namespace

Payload encode_frame(Op op, Status status, std::uint32_t request_id, const Payload& payload) {
  FrameHeader h;
  h.op = op;
  h.status = status;
  h.request_id = request_id;
  h.payload_length = payload.size();
  HeaderBytes header = encode_header(h);
  // Rationale: sized up front and filled by copy, because GCC 12 at -O2 reports a false
  // -Warray-bounds for vector::insert after a 24-byte range construction.
  Payload out(header.size() + payload.size());
  std::copy(header.begin(), header.end(), out.begin());
  std::copy(payload.begin(), payload.end(), out.begin() + static_cast<std::ptrdiff_t>(header.size()));
  return out;
}

Payload encode_error_message(std::string_view message) {
  return encode_with(message, [](ByteWriter& w, std::string_view m) { w.str16(cut(m, k_max_message_length)); });
}

common::Result<std::string> decode_error_message(Bytes payload) {
  ByteReader r(payload);
  JC_READ(message, r.str16("message", k_max_message_length));
  return finish(r, std::string(message), "an error reply");
}

bool is_valid_key_id_prefix(std::string_view prefix, bool allow_empty) {
  if (prefix.empty()) return allow_empty;
  if (prefix.size() < k_min_key_id_prefix_length || prefix.size() > 64) return false;
  for (char c : prefix) {
    bool hex = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
    if (!hex) return false;
  }
  return true;
}

void encode_key(ByteWriter& w, const KeyFields& key) {
  w.u16(key.key_schema);
  w.digest(key.content);
  w.str16(cut(key.arch, k_max_arch_length));
  w.u32(key.driver_api);
  w.str16(cut(key.driver_build, k_max_driver_build_length));
  w.str16(cut(key.options, k_max_options_length));
}

void encode_fast_key(ByteWriter& w, const FastKey& key) {
  w.u16(key.key_schema);
  w.checksum(key.content_fast);
  w.str16(cut(key.arch, k_max_arch_length));
  w.u32(key.driver_api);
  w.str16(cut(key.driver_build, k_max_driver_build_length));
  w.str16(cut(key.options, k_max_options_length));
}

common::Result<FastKey> decode_fast_key(ByteReader& r) {
  FastKey key;
  JC_READ(schema, r.u16("key_schema"));
  JC_READ(content_fast, r.checksum("content_fast"));
  JC_READ(arch, r.str16("arch", k_max_arch_length));
  JC_READ(driver_api, r.u32("driver_api"));
  JC_READ(driver_build, r.str16("driver_build", k_max_driver_build_length));
  JC_READ(options, r.str16("options", k_max_options_length));
  key.key_schema = schema;
  key.content_fast = content_fast;
  key.arch = arch;
  key.driver_api = driver_api;
  key.driver_build = driver_build;
  key.options = options;
  return key;
}

common::Result<KeyFields> decode_key(ByteReader& r) {
  KeyFields key;
  JC_READ(schema, r.u16("key_schema"));
  JC_READ(content, r.digest("content"));
  JC_READ(arch, r.str16("arch", k_max_arch_length));
  JC_READ(driver_api, r.u32("driver_api"));
  JC_READ(driver_build, r.str16("driver_build", k_max_driver_build_length));
  JC_READ(options, r.str16("options", k_max_options_length));
  key.key_schema = schema;
  key.content = content;
  key.arch = arch;
  key.driver_api = driver_api;
  key.driver_build = driver_build;
  key.options = options;
  return key;
}

void encode_entry_info(ByteWriter& w, const EntryInfo& info) {
  w.digest(info.key_id);
  encode_key(w, info.key);
  w.u32(info.namespace_id);
  w.str16(cut(info.producer, k_max_producer_length));
  w.u8(info.codec);
  w.u64(info.raw_size);
  w.u64(info.stored_size);
  w.checksum(info.checksum);
  w.i64(info.created_at_ms);
  w.i64(info.last_used_at_ms);
  w.u64(info.hits);
  w.u64(info.compile_time_us);
  w.i64(info.quarantined_at_ms);
}

common::Result<EntryInfo> decode_entry_info(ByteReader& r) {
  EntryInfo info;
  JC_READ(key_id, r.digest("key_id"));
  JC_READ(key, decode_key(r));
  JC_READ(namespace_id, r.u32("namespace"));
  JC_READ(producer, r.str16("producer", k_max_producer_length));
  JC_READ(codec, r.u8("codec"));
  JC_READ(raw_size, r.u64("raw_size"));
  JC_READ(stored_size, r.u64("stored_size"));
  JC_READ(checksum, r.checksum("checksum"));
  JC_READ(created, r.i64("created_at_ms"));
  JC_READ(last_used, r.i64("last_used_at_ms"));
  JC_READ(hits, r.u64("hits"));
  JC_READ(compile_time, r.u64("compile_time_us"));
  JC_READ(quarantined_at, r.i64("quarantined_at_ms"));
  info.key_id = key_id;
  info.key = std::move(key);
  info.namespace_id = namespace_id;
  info.producer = producer;
  info.codec = codec;
  info.raw_size = raw_size;
  info.stored_size = stored_size;
  info.checksum = checksum;
  info.created_at_ms = created;
  info.last_used_at_ms = last_used;
  info.hits = hits;
  info.compile_time_us = compile_time;
  info.quarantined_at_ms = quarantined_at;
  return info;
}

// ---- HELLO

Payload encode(const HelloRequest& m) {
  return encode_with(m, [](ByteWriter& w, const HelloRequest& h) {
    w.u16(h.min_version);
    w.u16(h.max_version);
    w.str16(cut(h.client_name, k_max_client_name_length));
  });
}

common::Result<HelloRequest> decode_hello_request(Bytes payload) {
  ByteReader r(payload);
  HelloRequest m;
  JC_READ(min_version, r.u16("min_version"));
  JC_READ(max_version, r.u16("max_version"));
  JC_READ(name, r.str16("client_name", k_max_client_name_length));
  JITCACHE_TRY(check_printable_field("client_name", name));
  m.min_version = min_version;
  m.max_version = max_version;
  m.client_name = name;
  return finish(r, std::move(m), "HELLO");
}

Payload encode(const HelloReply& m) {
  return encode_with(m, [](ByteWriter& w, const HelloReply& h) {
    w.u16(h.version);
    w.u64(h.capabilities);
    w.str16(cut(h.daemon_version, k_max_version_string_length));
    w.u64(h.max_frame_bytes);
  });
}

common::Result<HelloReply> decode_hello_reply(Bytes payload) {
  ByteReader r(payload);
  HelloReply m;
  JC_READ(version, r.u16("version"));
  JC_READ(capabilities, r.u64("capabilities"));
  JC_READ(daemon_version, r.str16("daemon_version", k_max_version_string_length));
  JC_READ(max_frame, r.u64("max_frame_bytes"));
  m.version = version;
  m.capabilities = capabilities;
  m.daemon_version = daemon_version;
  m.max_frame_bytes = max_frame;
  return finish(r, std::move(m), "HELLO reply");
}

// ---- LOOKUP

Payload encode(const LookupRequest& m) {
  return encode_with(m, [](ByteWriter& w, const LookupRequest& l) {
    w.u8(static_cast<std::uint8_t>(l.selector));
    if (l.selector == LookupSelector::key) {
      encode_key(w, l.key);
    } else if (l.selector == LookupSelector::fast_key) {
      encode_fast_key(w, l.fast_key);
    } else {
      w.str16(cut(l.key_id_prefix, 64));
    }
  });
}

common::Result<LookupRequest> decode_lookup_request(Bytes payload) {
  ByteReader r(payload);
  LookupRequest m;
  JC_READ(selector, r.u8("selector"));
  if (selector == static_cast<std::uint8_t>(LookupSelector::key)) {
    JC_READ(key, decode_key(r));
    m.selector = LookupSelector::key;
    m.key = std::move(key);
  } else if (selector == static_cast<std::uint8_t>(LookupSelector::key_id_prefix)) {
    JC_READ(prefix, read_key_id_prefix(r, false));
    m.selector = LookupSelector::key_id_prefix;
    m.key_id_prefix = std::move(prefix);
  } else if (selector == static_cast<std::uint8_t>(LookupSelector::fast_key)) {
    JC_READ(fast_key, decode_fast_key(r));
    m.selector = LookupSelector::fast_key;
    m.fast_key = std::move(fast_key);
  } else {
    return common::make_error(common::ErrorCode::invalid_argument,
                              "LOOKUP selector " + std::to_string(selector) +
                                  " is not 0 (key), 1 (key id prefix) or 2 (fast key)");
  }
  return finish(r, std::move(m), "LOOKUP");
}

namespace {
// At least the bytes encode_entry_info() writes (its strings may be cut shorter).
// Rationale: reserved up front, a LOOKUP hit's reply head is one allocation; grown byte by byte it
// was a chain of doublings, a tenth of the daemon's own CPU per 4 KB hit in malloc, copies and
// vector inserts (docs/benchmarks.md "One turn per request").
std::size_t entry_info_size(const EntryInfo& info) {
  constexpr std::size_t digests = 32 + 32 + 16;           // key_id, key.content, checksum
  constexpr std::size_t numbers = 2 + 4 + 4 + 1 + 8 * 7;  // schema, api, namespace, codec, 7 x 64 bits
  constexpr std::size_t string_lengths = 2 * 4;           // arch, driver_build, options, producer
  return digests + numbers + string_lengths + info.key.arch.size() + info.key.driver_build.size() +
         info.key.options.size() + info.producer.size();
}
}  // namespace

Payload encode_lookup_reply_head(const EntryInfo& info, std::uint32_t image_size) {
  Payload out;
  out.reserve(entry_info_size(info) + 4);
  ByteWriter w(out);
  encode_entry_info(w, info);
  w.blob32_length(image_size);
  return out;
}

common::Result<LookupReply> decode_lookup_reply(Bytes payload) {
  ByteReader r(payload);
  LookupReply m;
  JC_READ(info, decode_entry_info(r));
  JC_READ(image, r.blob32("image"));
  m.info = std::move(info);
  m.image = image;
  return finish(r, std::move(m), "LOOKUP reply");
}

Payload encode(const LookupReplyByDescriptor& m) {
  Payload out;
  out.reserve(entry_info_size(m.info) + 8);
  ByteWriter w(out);
  encode_entry_info(w, m.info);
  w.u64(m.image_size);
  return out;
}

common::Result<LookupReplyByDescriptor> decode_lookup_reply_by_descriptor(Bytes payload) {
  ByteReader r(payload);
  LookupReplyByDescriptor m;
  JC_READ(info, decode_entry_info(r));
  JC_READ(image_size, r.u64("image_size"));
  m.info = std::move(info);
  m.image_size = image_size;
  return finish(r, std::move(m), "LOOKUP reply");
}

// ---- PUT

Payload encode_put_request_head(const PutRequest& m) {
  Payload out;
  ByteWriter w(out);
  encode_key(w, m.key);
  w.str16(cut(m.producer, k_max_producer_length));
  w.u64(m.compile_time_us);
  w.blob32_length(static_cast<std::uint32_t>(m.image.size()));
  return out;
}

Payload encode_put_request_trailer(const PutRequest& m) {
  Payload out;
  if (m.content_fast) {
    ByteWriter w(out);
    w.checksum(*m.content_fast);
  }
  return out;
}

Payload encode(const PutRequest& m) {
  Payload out = encode_put_request_head(m);
  out.insert(out.end(), m.image.begin(), m.image.end());
  const Payload trailer = encode_put_request_trailer(m);
  out.insert(out.end(), trailer.begin(), trailer.end());
  return out;
}

common::Result<PutRequest> decode_put_request(Bytes payload) {
  ByteReader r(payload);
  PutRequest m;
  JC_READ(key, decode_key(r));
  JC_READ(producer, r.str16("producer", k_max_producer_length));
  JC_READ(compile_time, r.u64("compile_time_us"));
  JC_READ(image, r.blob32("image"));
  JITCACHE_TRY(check_printable_field("producer", producer));
  JITCACHE_TRY(check_compile_time_us(compile_time));
  m.key = std::move(key);
  m.producer = producer;
  m.compile_time_us = compile_time;
  m.image = image;
  // Optional, behind k_capability_fast_key: a PUT without it is still exactly consumed.
  if (r.remaining() > 0) {
    JC_READ(content_fast, r.checksum("content_fast"));
    m.content_fast = content_fast;
  }
  return finish(r, std::move(m), "PUT");
}

Payload encode(const PutReply& m) {
  return encode_with(m, [](ByteWriter& w, const PutReply& p) {
    w.digest(p.key_id);
    w.u32(p.namespace_id);
    w.u8(p.replaced ? 1 : 0);
  });
}

common::Result<PutReply> decode_put_reply(Bytes payload) {
  ByteReader r(payload);
  PutReply m;
  JC_READ(key_id, r.digest("key_id"));
  JC_READ(namespace_id, r.u32("namespace"));
  JC_READ(replaced, r.u8("replaced"));
  m.key_id = key_id;
  m.namespace_id = namespace_id;
  m.replaced = replaced != 0;
  return finish(r, std::move(m), "PUT reply");
}

// ---- PING, STATS requests

common::Result<void> decode_empty(Bytes payload, std::string_view op) {
  if (!payload.empty()) {
    return common::make_error(common::ErrorCode::invalid_argument,
                              std::string(op) + " takes no payload, got " + std::to_string(payload.size()) + " bytes");
  }
  return {};
}

Payload encode(const StatsReply& m) {
  return encode_with(m, [](ByteWriter& w, const StatsReply& s) {
    w.u32(static_cast<std::uint32_t>(s.values.size()));
    for (const auto& [name, value] : s.values) {
      w.str16(cut(name, k_max_stat_name_length));
      w.u64(value);
    }
  });
}

common::Result<StatsReply> decode_stats_reply(Bytes payload) {
  ByteReader r(payload);
  StatsReply m;
  JC_READ(count, r.u32("count"));
  if (count > k_max_stats_count) {
    return common::make_error(common::ErrorCode::too_large, "STATS reply claims " + std::to_string(count) + " values");
  }
  for (std::uint32_t i = 0; i < count; ++i) {
    JC_READ(name, r.str16("name", k_max_stat_name_length));
    JC_READ(value, r.u64("value"));
    m.values.emplace_back(std::string(name), value);
  }
  return finish(r, std::move(m), "STATS reply");
}

// ---- LIST

Payload encode(const ListRequest& m) {
  return encode_with(m, [](ByteWriter& w, const ListRequest& l) {
    w.str16(cut(l.arch, k_max_arch_length));
    w.u32(l.driver_api);
    w.str16(cut(l.driver_build, k_max_driver_build_length));
    w.u8(l.namespace_filter ? 1 : 0);
    w.u32(l.namespace_id);
    w.str16(cut(l.key_id_prefix, 64));
    w.u32(l.limit);
    w.str16(cut(l.cursor, k_max_cursor_length));
    if (l.stale_only) w.u8(1);
  });
}

common::Result<ListRequest> decode_list_request(Bytes payload) {
  ByteReader r(payload);
  ListRequest m;
  JC_READ(arch, r.str16("arch", k_max_arch_length));
  JC_READ(driver_api, r.u32("driver_api"));
  JC_READ(driver_build, r.str16("driver_build", k_max_driver_build_length));
  JC_READ(namespace_filter, r.u8("namespace_filter"));
  JC_READ(namespace_id, r.u32("namespace"));
  JC_READ(prefix, read_key_id_prefix(r, true));
  JC_READ(limit, r.u32("limit"));
  JC_READ(cursor, r.str16("cursor", k_max_cursor_length));
  if (r.remaining() > 0) {
    JC_READ(stale_only, r.u8("stale_only"));
    // Sent only when set (absent means 0), so one request has one encoding.
    if (stale_only != 1)
      return common::make_error(common::ErrorCode::invalid_argument, "stale_only, when sent, must be 1");
    m.stale_only = true;
  }
  if (namespace_filter > 1) {
    return common::make_error(common::ErrorCode::invalid_argument, "namespace_filter must be 0 or 1");
  }
  if (limit < 1 || limit > k_max_list_limit) {
    return common::make_error(common::ErrorCode::invalid_argument, "LIST limit " + std::to_string(limit) +
                                                                       " is outside 1.." +
                                                                       std::to_string(k_max_list_limit));
  }
  m.arch = arch;
  m.driver_api = driver_api;
  m.driver_build = driver_build;
  m.namespace_filter = namespace_filter == 1;
  m.namespace_id = namespace_id;
  m.key_id_prefix = std::move(prefix);
  m.limit = limit;
  m.cursor = cursor;
  return finish(r, std::move(m), "LIST");
}

Payload encode(const ListReply& m) {
  return encode_with(m, [](ByteWriter& w, const ListReply& l) {
    w.u32(static_cast<std::uint32_t>(l.entries.size()));
    for (const auto& e : l.entries) encode_entry_info(w, e);
    w.str16(cut(l.next_cursor, k_max_cursor_length));
  });
}

common::Result<ListReply> decode_list_reply(Bytes payload) {
  ByteReader r(payload);
  ListReply m;
  JC_READ(count, r.u32("count"));
  if (count > k_max_list_limit) {
    return common::make_error(common::ErrorCode::too_large, "LIST reply claims " + std::to_string(count) + " entries");
  }
  for (std::uint32_t i = 0; i < count; ++i) {
    JC_READ(info, decode_entry_info(r));
    m.entries.push_back(std::move(info));
  }
  JC_READ(cursor, r.str16("next_cursor", k_max_cursor_length));
  m.next_cursor = cursor;
  return finish(r, std::move(m), "LIST reply");
}

// ---- REMOVE

Payload encode(const RemoveRequest& m) {
  return encode_with(m, [](ByteWriter& w, const RemoveRequest& rm) { w.str16(cut(rm.key_id_prefix, 64)); });
}

common::Result<RemoveRequest> decode_remove_request(Bytes payload) {
  ByteReader r(payload);
  RemoveRequest m;
  JC_READ(prefix, read_key_id_prefix(r, false));
  m.key_id_prefix = std::move(prefix);
  return finish(r, std::move(m), "REMOVE");
}

Payload encode(const RemoveReply& m) {
  return encode_with(m, [](ByteWriter& w, const RemoveReply& rm) { w.u32(rm.removed); });
}

common::Result<RemoveReply> decode_remove_reply(Bytes payload) {
  ByteReader r(payload);
  RemoveReply m;
  JC_READ(removed, r.u32("removed"));
  m.removed = removed;
  return finish(r, std::move(m), "REMOVE reply");
}

// ---- GC

Payload encode(const GcReply& m) {
  return encode_with(m, [](ByteWriter& w, const GcReply& g) {
    w.u64(g.evicted_entries);
    w.u64(g.evicted_bytes);
    w.u64(g.stale_entries);
    w.u64(g.entries);
    w.u64(g.bytes_stored);
  });
}

common::Result<GcReply> decode_gc_reply(Bytes payload) {
  ByteReader r(payload);
  GcReply m;
  JC_READ(evicted_entries, r.u64("evicted_entries"));
  JC_READ(evicted_bytes, r.u64("evicted_bytes"));
  JC_READ(stale_entries, r.u64("stale_entries"));
  JC_READ(entries, r.u64("entries"));
  JC_READ(bytes_stored, r.u64("bytes_stored"));
  m.evicted_entries = evicted_entries;
  m.evicted_bytes = evicted_bytes;
  m.stale_entries = stale_entries;
  m.entries = entries;
  m.bytes_stored = bytes_stored;
  return finish(r, std::move(m), "GC reply");
}

// ---- VERIFY

Payload encode(const VerifyReply& m) {
  return encode_with(m, [](ByteWriter& w, const VerifyReply& v) {
    w.str16(cut(v.integrity, k_max_integrity_text_length));
    w.u64(v.entries_checked);
    w.u64(v.entries_removed);
    const std::size_t listed = std::min<std::size_t>(v.removed.size(), k_max_verify_listed);
    w.u32(static_cast<std::uint32_t>(listed));
    for (std::size_t i = 0; i < listed; ++i) {
      w.digest(v.removed[i].key_id);
      w.u32(v.removed[i].namespace_id);
    }
    w.u64(v.duration_ms);
  });
}

common::Result<VerifyReply> decode_verify_reply(Bytes payload) {
  ByteReader r(payload);
  VerifyReply m;
  JC_READ(integrity, r.str16("integrity", k_max_integrity_text_length));
  JC_READ(checked, r.u64("entries_checked"));
  JC_READ(removed, r.u64("entries_removed"));
  JC_READ(listed, r.u32("removed_count"));
  if (listed > k_max_verify_listed || listed > removed) {
    return common::make_error(common::ErrorCode::invalid_argument,
                              "VERIFY reply lists " + std::to_string(listed) + " removed entries (at most " +
                                  std::to_string(k_max_verify_listed) + " and entries_removed)");
  }
  for (std::uint32_t i = 0; i < listed; ++i) {
    JC_READ(key_id, r.digest("key_id"));
    JC_READ(namespace_id, r.u32("namespace"));
    m.removed.push_back(VerifiedRemoval{key_id, namespace_id});
  }
  JC_READ(duration_ms, r.u64("duration_ms"));
  m.integrity = integrity;
  m.entries_checked = checked;
  m.entries_removed = removed;
  m.duration_ms = duration_ms;
  return finish(r, std::move(m), "VERIFY reply");
}

// ---- REPORT_FAILURE

std::string_view failure_stage_name(FailureStage stage) { return name_in(k_failure_stages, stage); }

Payload encode(const ReportFailureRequest& m) {
  return encode_with(m, [](ByteWriter& w, const ReportFailureRequest& f) {
    encode_key(w, f.key);
    w.u32(f.cu_result);
    w.u8(static_cast<std::uint8_t>(f.stage));
    w.str16(cut(f.detail, k_max_failure_detail_length));
  });
}

common::Result<ReportFailureRequest> decode_report_failure_request(Bytes payload) {
  ByteReader r(payload);
  ReportFailureRequest m;
  JC_READ(key, decode_key(r));
  JC_READ(cu_result, r.u32("cu_result"));
  JC_READ(stage, r.u8("stage"));
  JC_READ(detail, r.str16("detail", k_max_failure_detail_length));
  JITCACHE_TRY(check_printable_field("detail", detail));
  if (cu_result == 0) {
    return common::make_error(common::ErrorCode::invalid_argument,
                              "REPORT_FAILURE cu_result 0 is CUDA_SUCCESS, not a failure");
  }
  if (stage < static_cast<std::uint8_t>(FailureStage::image) || stage > static_cast<std::uint8_t>(FailureStage::load)) {
    return common::make_error(common::ErrorCode::invalid_argument,
                              "REPORT_FAILURE stage " + std::to_string(stage) +
                                  " is not 1 (image), 2 (ptx_version), 3 (jit) or 4 (load)");
  }
  m.key = std::move(key);
  m.cu_result = cu_result;
  m.stage = static_cast<FailureStage>(stage);
  m.detail = detail;
  return finish(r, std::move(m), "REPORT_FAILURE");
}

Payload encode(const ReportFailureReply& m) {
  return encode_with(m, [](ByteWriter& w, const ReportFailureReply& f) {
    w.u8(static_cast<std::uint8_t>(f.outcome));
    w.u32(f.namespace_id);
  });
}

common::Result<ReportFailureReply> decode_report_failure_reply(Bytes payload) {
  ByteReader r(payload);
  ReportFailureReply m;
  JC_READ(outcome, r.u8("outcome"));
  JC_READ(namespace_id, r.u32("namespace"));
  if (outcome > static_cast<std::uint8_t>(ReportFailureOutcome::hidden_from_reporter)) {
    return common::make_error(common::ErrorCode::invalid_argument,
                              "REPORT_FAILURE reply outcome " + std::to_string(outcome) +
                                  " is not 0 (quarantined), 1 (already quarantined) or 2 (hidden from the reporter)");
  }
  m.outcome = static_cast<ReportFailureOutcome>(outcome);
  m.namespace_id = namespace_id;
  return finish(r, std::move(m), "REPORT_FAILURE reply");
}

// ---- HIT_NOTE

Payload encode(const HitNoteRequest& m) {
  return encode_with(m, [](ByteWriter& w, const HitNoteRequest& h) { encode_fast_key(w, h.fast_key); });
}

common::Result<HitNoteRequest> decode_hit_note_request(Bytes payload) {
  ByteReader r(payload);
  HitNoteRequest m;
  JC_READ(fast_key, decode_fast_key(r));
  m.fast_key = std::move(fast_key);
  return finish(r, std::move(m), "HIT_NOTE");
}

}  // namespace jitcache::proto
