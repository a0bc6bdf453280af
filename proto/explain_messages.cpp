#include <proto/explain_messages.hpp>

#include <algorithm>
#include <string>

namespace jitcache::proto {

namespace {

std::string_view cut(std::string_view s, std::size_t max) { return s.substr(0, std::min(s.size(), max)); }

common::Error malformed(std::string_view what, std::string message) {
  return common::make_error(common::ErrorCode::invalid_argument, std::string(what) + ": " + std::move(message));
}

// A value of a numbered vocabulary, refused when outside its table.
template <class T, std::size_t N>
common::Result<T> read_named(ByteReader& r, const std::array<NamedValue<T>, N>& table, std::string_view field,
                             std::string_view what) {
  JITCACHE_TRY_ASSIGN(const std::uint8_t raw, r.u8(field));
  for (const NamedValue<T>& row : table) {
    if (static_cast<std::uint8_t>(row.value) == raw) return row.value;
  }
  return malformed(what, std::string(field) + " " + std::to_string(raw) + " is not in its table");
}

common::Result<std::string> read_text(ByteReader& r, std::string_view field, std::size_t max) {
  JITCACHE_TRY_ASSIGN(const std::string_view text, r.str16(field, max));
  return std::string(text);
}

void write_finding(ByteWriter& w, const ExplainFinding& f) {
  w.u8(static_cast<std::uint8_t>(f.reason));
  w.digest(f.key_id);
  w.u32(f.namespace_id);
  w.i64(f.at_ms);
  w.u32(f.cu_result);
  w.u8(f.stage);
  w.u32(f.uid);
  w.u8(static_cast<std::uint8_t>(f.eviction));
  w.str16(cut(f.detail, k_max_explain_detail_length));
  const std::size_t count = std::min(f.differences.size(), k_max_explain_differences);
  w.u8(static_cast<std::uint8_t>(count));
  for (std::size_t i = 0; i < count; ++i) {
    w.str16(cut(f.differences[i].field, k_max_explain_field_length));
    w.str16(cut(f.differences[i].asked, k_max_explain_value_length));
    w.str16(cut(f.differences[i].found, k_max_explain_value_length));
  }
}

common::Result<ExplainFinding> read_finding(ByteReader& r) {
  constexpr std::string_view what = "EXPLAIN reply";
  ExplainFinding f;
  JITCACHE_TRY_ASSIGN(f.reason, read_named(r, k_explain_reasons, "reason", what));
  JITCACHE_TRY_ASSIGN(f.key_id, r.digest("key_id"));
  JITCACHE_TRY_ASSIGN(f.namespace_id, r.u32("namespace"));
  JITCACHE_TRY_ASSIGN(f.at_ms, r.i64("at_ms"));
  JITCACHE_TRY_ASSIGN(f.cu_result, r.u32("cu_result"));
  JITCACHE_TRY_ASSIGN(f.stage, r.u8("stage"));
  if (f.stage != 0 && name_in(k_failure_stages, static_cast<FailureStage>(f.stage)) == "unknown") {
    return malformed(what, "stage " + std::to_string(f.stage) + " is not 0 or a load stage");
  }
  JITCACHE_TRY_ASSIGN(f.uid, r.u32("uid"));
  JITCACHE_TRY_ASSIGN(f.eviction, read_named(r, k_eviction_causes, "eviction", what));
  JITCACHE_TRY_ASSIGN(f.detail, read_text(r, "detail", k_max_explain_detail_length));
  JITCACHE_TRY_ASSIGN(const std::uint8_t count, r.u8("difference_count"));
  if (count > k_max_explain_differences) {
    return malformed(what, "a finding lists " + std::to_string(count) + " differences (at most " +
                               std::to_string(k_max_explain_differences) + ")");
  }
  for (std::uint8_t i = 0; i < count; ++i) {
    ExplainDifference d;
    JITCACHE_TRY_ASSIGN(d.field, read_text(r, "field", k_max_explain_field_length));
    JITCACHE_TRY_ASSIGN(d.asked, read_text(r, "asked", k_max_explain_value_length));
    JITCACHE_TRY_ASSIGN(d.found, read_text(r, "found", k_max_explain_value_length));
    f.differences.push_back(std::move(d));
  }
  return f;
}

void write_miss(ByteWriter& w, const MissRecord& m) {
  w.i64(m.at_ms);
  w.u32(m.uid);
  w.u16(static_cast<std::uint16_t>(m.op));
  w.u8(static_cast<std::uint8_t>(m.kind));
  w.digest(m.key_id);
  encode_key(w, m.key);
  w.checksum(m.content_fast);
}

common::Result<MissRecord> read_miss(ByteReader& r) {
  constexpr std::string_view what = "MISSES reply";
  MissRecord m;
  JITCACHE_TRY_ASSIGN(m.at_ms, r.i64("at_ms"));
  JITCACHE_TRY_ASSIGN(m.uid, r.u32("uid"));
  JITCACHE_TRY_ASSIGN(const std::uint16_t op, r.u16("op"));
  if (op != static_cast<std::uint16_t>(Op::lookup) && op != static_cast<std::uint16_t>(Op::compile)) {
    return malformed(what, "a miss of op " + std::to_string(op) + " (only LOOKUP and COMPILE miss)");
  }
  m.op = static_cast<Op>(op);
  JITCACHE_TRY_ASSIGN(m.kind, read_named(r, k_miss_kinds, "kind", what));
  JITCACHE_TRY_ASSIGN(m.key_id, r.digest("key_id"));
  JITCACHE_TRY_ASSIGN(m.key, decode_key(r));
  JITCACHE_TRY_ASSIGN(m.content_fast, r.checksum("content_fast"));
  return m;
}

void write_eviction(ByteWriter& w, const EvictionRecord& e) {
  w.digest(e.key_id);
  w.u32(e.namespace_id);
  encode_key(w, e.key);
  w.u64(e.stored_bytes);
  w.u64(e.hits);
  w.u64(e.compile_time_us);
  w.i64(e.evicted_at_ms);
  w.u8(static_cast<std::uint8_t>(e.cause));
}

common::Result<EvictionRecord> read_eviction(ByteReader& r) {
  constexpr std::string_view what = "MISSES reply";
  EvictionRecord e;
  JITCACHE_TRY_ASSIGN(e.key_id, r.digest("key_id"));
  JITCACHE_TRY_ASSIGN(e.namespace_id, r.u32("namespace"));
  JITCACHE_TRY_ASSIGN(e.key, decode_key(r));
  JITCACHE_TRY_ASSIGN(e.stored_bytes, r.u64("stored_bytes"));
  JITCACHE_TRY_ASSIGN(e.hits, r.u64("hits"));
  JITCACHE_TRY_ASSIGN(e.compile_time_us, r.u64("compile_time_us"));
  JITCACHE_TRY_ASSIGN(e.evicted_at_ms, r.i64("evicted_at_ms"));
  JITCACHE_TRY_ASSIGN(e.cause, read_named(r, k_eviction_causes, "cause", what));
  if (e.cause == EvictionCause::none) return malformed(what, "an eviction without a cause");
  return e;
}

}  // namespace

std::string_view explain_reason_name(ExplainReason reason) { return name_in(k_explain_reasons, reason); }
std::string_view explain_verdict_name(ExplainVerdict verdict) { return name_in(k_explain_verdicts, verdict); }
std::string_view eviction_cause_name(EvictionCause cause) { return name_in(k_eviction_causes, cause); }
std::string_view miss_kind_name(MissKind kind) { return name_in(k_miss_kinds, kind); }

Payload encode(const ExplainRequest& m) {
  Payload out;
  ByteWriter w(out);
  w.u8(static_cast<std::uint8_t>(m.selector));
  if (m.selector == ExplainSelector::key) encode_key(w, m.key);
  else w.digest(m.key_id);
  return out;
}

Payload encode(const ExplainReply& m) {
  Payload out;
  ByteWriter w(out);
  w.u8(static_cast<std::uint8_t>(m.verdict));
  w.u8(m.key_known ? 1 : 0);
  if (m.key_known) encode_key(w, m.key);
  w.digest(m.key_id);
  const std::size_t count = std::min(m.findings.size(), k_max_explain_findings);
  w.u8(static_cast<std::uint8_t>(count));
  for (std::size_t i = 0; i < count; ++i) write_finding(w, m.findings[i]);
  return out;
}

Payload encode(const MissesRequest& m) {
  Payload out;
  ByteWriter w(out);
  w.u32(m.limit);
  return out;
}

Payload encode(const MissesReply& m) {
  Payload out;
  ByteWriter w(out);
  const std::size_t misses = std::min<std::size_t>(m.misses.size(), k_max_misses_listed);
  w.u32(static_cast<std::uint32_t>(misses));
  for (std::size_t i = 0; i < misses; ++i) write_miss(w, m.misses[i]);
  const std::size_t evictions = std::min<std::size_t>(m.evictions.size(), k_max_misses_listed);
  w.u32(static_cast<std::uint32_t>(evictions));
  for (std::size_t i = 0; i < evictions; ++i) write_eviction(w, m.evictions[i]);
  return out;
}

common::Result<ExplainRequest> decode_explain_request(Bytes payload) {
  ByteReader r(payload);
  ExplainRequest m;
  JITCACHE_TRY_ASSIGN(m.selector, read_named(r, k_explain_selectors, "selector", "EXPLAIN"));
  if (m.selector == ExplainSelector::key) {
    JITCACHE_TRY_ASSIGN(m.key, decode_key(r));
  } else {
    JITCACHE_TRY_ASSIGN(m.key_id, r.digest("key_id"));
  }
  JITCACHE_TRY(r.expect_end("EXPLAIN"));
  return m;
}

common::Result<ExplainReply> decode_explain_reply(Bytes payload) {
  constexpr std::string_view what = "EXPLAIN reply";
  ByteReader r(payload);
  ExplainReply m;
  JITCACHE_TRY_ASSIGN(m.verdict, read_named(r, k_explain_verdicts, "verdict", what));
  JITCACHE_TRY_ASSIGN(const std::uint8_t known, r.u8("key_known"));
  if (known > 1) return malformed(what, "key_known " + std::to_string(known) + " is not 0 or 1");
  m.key_known = known == 1;
  if (m.key_known) {
    JITCACHE_TRY_ASSIGN(m.key, decode_key(r));
  }
  JITCACHE_TRY_ASSIGN(m.key_id, r.digest("key_id"));
  JITCACHE_TRY_ASSIGN(const std::uint8_t count, r.u8("finding_count"));
  if (count > k_max_explain_findings) {
    return malformed(what, "lists " + std::to_string(count) + " findings (at most " +
                               std::to_string(k_max_explain_findings) + ")");
  }
  for (std::uint8_t i = 0; i < count; ++i) {
    JITCACHE_TRY_ASSIGN(ExplainFinding finding, read_finding(r));
    m.findings.push_back(std::move(finding));
  }
  JITCACHE_TRY(r.expect_end(what));
  return m;
}

common::Result<MissesRequest> decode_misses_request(Bytes payload) {
  ByteReader r(payload);
  MissesRequest m;
  JITCACHE_TRY_ASSIGN(m.limit, r.u32("limit"));
  if (m.limit < 1 || m.limit > k_max_misses_listed) {
    return malformed("MISSES",
                     "limit " + std::to_string(m.limit) + " is not within 1.." + std::to_string(k_max_misses_listed));
  }
  JITCACHE_TRY(r.expect_end("MISSES"));
  return m;
}

common::Result<MissesReply> decode_misses_reply(Bytes payload) {
  constexpr std::string_view what = "MISSES reply";
  ByteReader r(payload);
  MissesReply m;
  JITCACHE_TRY_ASSIGN(const std::uint32_t misses, r.u32("miss_count"));
  if (misses > k_max_misses_listed) {
    return malformed(what, "lists " + std::to_string(misses) + " misses (at most " +
                               std::to_string(k_max_misses_listed) + ")");
  }
  for (std::uint32_t i = 0; i < misses; ++i) {
    JITCACHE_TRY_ASSIGN(MissRecord record, read_miss(r));
    m.misses.push_back(std::move(record));
  }
  JITCACHE_TRY_ASSIGN(const std::uint32_t evictions, r.u32("eviction_count"));
  if (evictions > k_max_misses_listed) {
    return malformed(what, "lists " + std::to_string(evictions) + " evictions (at most " +
                               std::to_string(k_max_misses_listed) + ")");
  }
  for (std::uint32_t i = 0; i < evictions; ++i) {
    JITCACHE_TRY_ASSIGN(EvictionRecord record, read_eviction(r));
    m.evictions.push_back(std::move(record));
  }
  JITCACHE_TRY(r.expect_end(what));
  return m;
}

}  // namespace jitcache::proto
