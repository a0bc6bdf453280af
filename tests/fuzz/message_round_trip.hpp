// Decode/re-encode checks shared by the fuzz targets over wire payloads (fuzz_frame_decoder,
// fuzz_payload_decoders). A violated property prints what was violated and calls abort(), which
// libFuzzer reports as a crash with the input that caused it.
//
// Properties:
//   - a decode error is invalid_argument or too_large (what the daemon maps to bad_request/too_large)
//     and has a message;
//   - a decoded message re-encodes to exactly the bytes it was decoded from (the encoding has one
//     byte form per message) and decodes again to an equal message.
#pragma once

#include <proto/bundle_messages.hpp>
#include <proto/compile_messages.hpp>
#include <proto/explain_messages.hpp>
#include <proto/messages.hpp>
#include <proto/nvrtc_compile_messages.hpp>
#include <proto/nvrtc_note_messages.hpp>
#include <proto/published_image.hpp>
#include <proto/remote_check_messages.hpp>
#include <proto/wire.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace jitcache::proto::fuzz {

[[noreturn]] inline void fail(const char* what) {
  std::fprintf(stderr, "property violated: %s\n", what);
  std::abort();
}

inline bool same_bytes(Bytes a, Bytes b) { return std::equal(a.begin(), a.end(), b.begin(), b.end()); }

inline bool same(const EntryInfo& a, const EntryInfo& b) {
  return a.key_id == b.key_id && a.key == b.key && a.namespace_id == b.namespace_id && a.producer == b.producer &&
         a.codec == b.codec && a.raw_size == b.raw_size && a.stored_size == b.stored_size && a.checksum == b.checksum &&
         a.created_at_ms == b.created_at_ms && a.last_used_at_ms == b.last_used_at_ms && a.hits == b.hits &&
         a.compile_time_us == b.compile_time_us && a.quarantined_at_ms == b.quarantined_at_ms;
}
inline bool same(const HelloRequest& a, const HelloRequest& b) {
  return a.min_version == b.min_version && a.max_version == b.max_version && a.client_name == b.client_name;
}
inline bool same(const HelloReply& a, const HelloReply& b) {
  return a.version == b.version && a.capabilities == b.capabilities && a.daemon_version == b.daemon_version &&
         a.max_frame_bytes == b.max_frame_bytes;
}
inline bool same(const LookupRequest& a, const LookupRequest& b) {
  return a.selector == b.selector && a.key == b.key && a.key_id_prefix == b.key_id_prefix && a.fast_key == b.fast_key;
}
inline bool same(const LookupReply& a, const LookupReply& b) {
  return same(a.info, b.info) && same_bytes(a.image, b.image);
}
inline bool same(const LookupReplyByDescriptor& a, const LookupReplyByDescriptor& b) {
  return same(a.info, b.info) && a.image_size == b.image_size;
}
inline bool same(const PutRequest& a, const PutRequest& b) {
  return a.key == b.key && a.producer == b.producer && a.compile_time_us == b.compile_time_us &&
         same_bytes(a.image, b.image) && a.content_fast == b.content_fast;
}
inline bool same(const PutReply& a, const PutReply& b) {
  return a.key_id == b.key_id && a.namespace_id == b.namespace_id && a.replaced == b.replaced;
}
inline bool same(const StatsReply& a, const StatsReply& b) { return a.values == b.values; }
inline bool same(const GcReply& a, const GcReply& b) {
  return a.evicted_entries == b.evicted_entries && a.evicted_bytes == b.evicted_bytes &&
         a.stale_entries == b.stale_entries && a.entries == b.entries && a.bytes_stored == b.bytes_stored;
}
inline bool same(const ListRequest& a, const ListRequest& b) {
  return a.arch == b.arch && a.driver_api == b.driver_api && a.driver_build == b.driver_build &&
         a.namespace_filter == b.namespace_filter && a.namespace_id == b.namespace_id &&
         a.key_id_prefix == b.key_id_prefix && a.limit == b.limit && a.cursor == b.cursor;
}
inline bool same(const ListReply& a, const ListReply& b) {
  return a.next_cursor == b.next_cursor &&
         std::equal(a.entries.begin(), a.entries.end(), b.entries.begin(), b.entries.end(),
                    [](const EntryInfo& x, const EntryInfo& y) { return same(x, y); });
}
inline bool same(const VerifyReply& a, const VerifyReply& b) {
  return a.integrity == b.integrity && a.entries_checked == b.entries_checked &&
         a.entries_removed == b.entries_removed && a.duration_ms == b.duration_ms &&
         std::equal(a.removed.begin(), a.removed.end(), b.removed.begin(), b.removed.end(),
                    [](const VerifiedRemoval& x, const VerifiedRemoval& y) {
                      return x.key_id == y.key_id && x.namespace_id == y.namespace_id;
                    });
}
inline bool same(const RemoveRequest& a, const RemoveRequest& b) { return a.key_id_prefix == b.key_id_prefix; }
inline bool same(const RemoveReply& a, const RemoveReply& b) { return a.removed == b.removed; }
inline bool same(const ReportFailureRequest& a, const ReportFailureRequest& b) {
  return a.key == b.key && a.cu_result == b.cu_result && a.stage == b.stage && a.detail == b.detail;
}
inline bool same(const ReportFailureReply& a, const ReportFailureReply& b) {
  return a.outcome == b.outcome && a.namespace_id == b.namespace_id;
}
inline bool same(const CompileRequest& a, const CompileRequest& b) {
  return a.key_schema == b.key_schema && a.arch == b.arch && a.driver_api == b.driver_api &&
         a.driver_build == b.driver_build && a.options == b.options && a.priority == b.priority &&
         same_bytes(a.ptx, b.ptx);
}
inline bool same(const CompileReply& a, const CompileReply& b) {
  return a.origin == b.origin && same(a.info, b.info) && same_bytes(a.image, b.image);
}
inline bool same(const CompileErrorReply& a, const CompileErrorReply& b) {
  return a.message == b.message && a.log == b.log;
}
inline bool same(const HitNoteRequest& a, const HitNoteRequest& b) { return a.fast_key == b.fast_key; }
inline bool same(const NvrtcNoteRequest& a, const NvrtcNoteRequest& b) { return a.reason == b.reason; }
inline bool same(const NvrtcCompileRequest& a, const NvrtcCompileRequest& b) {
  const NvrtcProgramText& x = a.program;
  const NvrtcProgramText& y = b.program;
  return a.identity == b.identity && a.claimed_key == b.claimed_key && a.include_record == b.include_record &&
         x.name == y.name && x.source == y.source && x.headers == y.headers && x.options == y.options &&
         x.name_expressions == y.name_expressions;
}
inline bool same(const NvrtcCompileReply& a, const NvrtcCompileReply& b) {
  return a.origin == b.origin && a.result == b.result;
}
inline bool same(const PublishedImage& a, const PublishedImage& b) {
  return a.fast_key == b.fast_key && same(a.reply, b.reply);
}
inline bool same(const RemoteCheckRequest& a, const RemoteCheckRequest& b) { return a.probe == b.probe; }
inline bool same(const RemoteCheckReply& a, const RemoteCheckReply& b) {
  return a.signer == b.signer && a.signing_message == b.signing_message && a.trusted == b.trusted &&
         std::equal(a.remotes.begin(), a.remotes.end(), b.remotes.begin(), b.remotes.end(),
                    [](const RemoteCheckRemote& x, const RemoteCheckRemote& y) {
                      return x.name == y.name && x.breaker == y.breaker && x.reachable == y.reachable &&
                             x.writable == y.writable && x.leases == y.leases && x.latency_us == y.latency_us &&
                             x.message == y.message;
                    });
}
inline bool same(const ExplainRequest& a, const ExplainRequest& b) {
  return a.selector == b.selector && a.key == b.key && a.key_id == b.key_id;
}
inline bool same(const ExplainReply& a, const ExplainReply& b) {
  return a.verdict == b.verdict && a.key_known == b.key_known && a.key == b.key && a.key_id == b.key_id &&
         std::equal(a.findings.begin(), a.findings.end(), b.findings.begin(), b.findings.end(),
                    [](const ExplainFinding& x, const ExplainFinding& y) {
                      return x.reason == y.reason && x.key_id == y.key_id && x.namespace_id == y.namespace_id &&
                             x.at_ms == y.at_ms && x.cu_result == y.cu_result && x.stage == y.stage && x.uid == y.uid &&
                             x.eviction == y.eviction && x.detail == y.detail &&
                             std::equal(x.differences.begin(), x.differences.end(), y.differences.begin(),
                                        y.differences.end(), [](const auto& p, const auto& q) {
                                          return p.field == q.field && p.asked == q.asked && p.found == q.found;
                                        });
                    });
}
inline bool same(const MissesRequest& a, const MissesRequest& b) { return a.limit == b.limit; }
inline bool same(const MissesReply& a, const MissesReply& b) {
  return std::equal(a.misses.begin(), a.misses.end(), b.misses.begin(), b.misses.end(),
                    [](const MissRecord& x, const MissRecord& y) {
                      return x.at_ms == y.at_ms && x.uid == y.uid && x.op == y.op && x.kind == y.kind &&
                             x.key_id == y.key_id && x.key == y.key && x.content_fast == y.content_fast;
                    }) &&
         std::equal(a.evictions.begin(), a.evictions.end(), b.evictions.begin(), b.evictions.end(),
                    [](const EvictionRecord& x, const EvictionRecord& y) {
                      return x.key_id == y.key_id && x.namespace_id == y.namespace_id && x.key == y.key &&
                             x.stored_bytes == y.stored_bytes && x.hits == y.hits &&
                             x.compile_time_us == y.compile_time_us && x.evicted_at_ms == y.evicted_at_ms &&
                             x.cause == y.cause;
                    });
}
inline bool same(const ExportBundleRequest& a, const ExportBundleRequest& b) {
  return a.arch == b.arch && a.driver_api == b.driver_api && a.driver_build == b.driver_build &&
         a.since_ms == b.since_ms && a.key_ids == b.key_ids;
}
inline bool same(const ExportBundleReply& a, const ExportBundleReply& b) {
  return a.entries == b.entries && a.bytes == b.bytes && a.signer == b.signer && a.digest == b.digest;
}
inline bool same(const ImportBundleRequest& a, const ImportBundleRequest& b) { return a.target == b.target; }
inline bool same(const ImportBundleReply& a, const ImportBundleReply& b) {
  return a.namespace_id == b.namespace_id && a.entries == b.entries && a.imported == b.imported &&
         a.skipped == b.skipped && a.signer == b.signer && a.signer_trusted == b.signer_trusted && a.host == b.host &&
         a.digest == b.digest;
}
inline bool same(const std::string& a, const std::string& b) { return a == b; }

inline void check_decode_error(const common::Error& error) {
  if (error.code != common::ErrorCode::invalid_argument && error.code != common::ErrorCode::too_large) {
    fail("a decoder failed with a code other than invalid_argument or too_large");
  }
  if (error.message.empty()) fail("a decoder failed without a message");
}

// Decodes `payload`; when that succeeds, checks that encoding the message gives `canonical` (the
// payload's one byte form) and that decoding the encoding gives an equal message.
template <class Decode, class Encode>
inline void check_round_trip(Bytes payload, Decode&& decode, Encode&& encode, Payload canonical) {
  auto first = decode(payload);
  if (!first) {
    check_decode_error(first.error());
    return;
  }
  const Payload encoded = encode(*first);
  if (encoded != canonical) fail("re-encoding a decoded message does not give back its bytes");
  auto second = decode(Bytes(encoded));
  if (!second) fail("a re-encoded message does not decode");
  if (!same(*first, *second)) fail("a re-encoded message decodes to a different message");
}

template <class Decode, class Encode>
inline void check_round_trip(Bytes payload, Decode&& decode, Encode&& encode) {
  check_round_trip(payload, decode, encode, Payload(payload.begin(), payload.end()));
}

inline const auto k_encode = [](const auto& message) { return encode(message); };

// The daemon's side: one decoder per op, chosen by the header (the op table, daemon/ops/op_table.hpp).
inline void check_request_decoder(Op op, Bytes payload) {
  switch (op) {
    case Op::hello: check_round_trip(payload, decode_hello_request, k_encode); return;
    case Op::ping:
    case Op::stats:
    case Op::gc:
    case Op::verify:
      if (auto r = decode_empty(payload, op_name(op)); !r) check_decode_error(r.error());
      return;
    case Op::lookup: check_round_trip(payload, decode_lookup_request, k_encode); return;
    case Op::put: check_round_trip(payload, decode_put_request, k_encode); return;
    case Op::list: check_round_trip(payload, decode_list_request, k_encode); return;
    case Op::remove: check_round_trip(payload, decode_remove_request, k_encode); return;
    case Op::report_failure: check_round_trip(payload, decode_report_failure_request, k_encode); return;
    case Op::compile: check_round_trip(payload, decode_compile_request, k_encode); return;
    case Op::hit_note:
      // The reply is empty (decode_empty, below); clients never read it.
      check_round_trip(payload, decode_hit_note_request, k_encode);
      return;
    case Op::remote_check: check_round_trip(payload, decode_remote_check_request, k_encode); return;
    case Op::explain: check_round_trip(payload, decode_explain_request, k_encode); return;
    case Op::misses: check_round_trip(payload, decode_misses_request, k_encode); return;
    case Op::export_bundle: check_round_trip(payload, decode_export_bundle_request, k_encode); return;
    case Op::import_bundle: check_round_trip(payload, decode_import_bundle_request, k_encode); return;
    case Op::nvrtc_note: check_round_trip(payload, decode_nvrtc_note_request, k_encode); return;
    case Op::nvrtc_compile: check_round_trip(payload, decode_nvrtc_compile_request, k_encode); return;
    default:
      // Unknown and reserved ops are answered bad_request without looking at the payload.
      if (is_implemented_op(op)) fail("an implemented op has no request decoder here");
      return;
  }
}

// The client's side: every reply decoder, whatever the op, as a confused or hostile daemon could
// send any of them.
inline void check_reply_decoders(Bytes payload) {
  check_round_trip(payload, decode_hello_reply, k_encode);
  check_round_trip(payload, decode_nvrtc_compile_reply, k_encode);
  check_round_trip(payload, decode_gc_reply, k_encode);
  check_round_trip(payload, decode_verify_reply, k_encode);
  check_round_trip(payload, decode_lookup_reply, [](const LookupReply& m) {
    Payload out = encode_lookup_reply_head(m.info, static_cast<std::uint32_t>(m.image.size()));
    out.insert(out.end(), m.image.begin(), m.image.end());
    return out;
  });
  // The same reply when the image travels as a descriptor (header flag k_flag_image_fd).
  check_round_trip(payload, decode_lookup_reply_by_descriptor, k_encode);
  // `replaced` is read as "non-zero means true", so its one byte form is 0 or 1.
  Payload put_reply_form(payload.begin(), payload.end());
  if (!put_reply_form.empty() && put_reply_form.back() > 1) put_reply_form.back() = 1;
  check_round_trip(payload, decode_put_reply, k_encode, std::move(put_reply_form));
  check_round_trip(payload, decode_stats_reply, k_encode);
  check_round_trip(payload, decode_list_reply, k_encode);
  check_round_trip(payload, decode_remove_reply, k_encode);
  check_round_trip(payload, decode_report_failure_reply, k_encode);
  check_round_trip(payload, decode_compile_reply, k_encode);
  check_round_trip(payload, decode_compile_error_reply, k_encode);
  check_round_trip(payload, decode_remote_check_reply, k_encode);
  check_round_trip(payload, decode_explain_reply, k_encode);
  check_round_trip(payload, decode_misses_reply, k_encode);
  check_round_trip(payload, decode_export_bundle_reply, k_encode);
  check_round_trip(payload, decode_import_bundle_reply, k_encode);
  check_round_trip(payload, decode_error_message, [](const std::string& m) { return encode_error_message(m); });
  if (auto r = decode_empty(payload, "PING reply"); !r) check_decode_error(r.error());
  // A published image file (PROTOCOL.md §8) is read by clients from a directory an attacker must
  // not be able to write, but its decoder gets the same scrutiny as a reply's.
  // Format 1 (no pad) is still read but no longer written: its file re-encodes as format 2, so the
  // byte-for-byte check holds for format 2 and the decode-again check for both.
  const bool unpadded = payload.size() >= 6 && payload[4] == k_published_format_unpadded && payload[5] == 0;
  const auto encode_file = [](const PublishedImage& m) {
    return encode_published_image(m.fast_key, m.reply.info, m.reply.image);
  };
  if (!unpadded) {
    check_round_trip(payload, decode_published_image, encode_file);
  } else if (auto file = decode_published_image(payload)) {
    check_round_trip(Bytes(encode_file(*file)), decode_published_image, encode_file);
  }
}

}  // namespace jitcache::proto::fuzz
