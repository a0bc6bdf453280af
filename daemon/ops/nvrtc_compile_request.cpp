// NVRTC_COMPILE's steps around the compile service (compile_request.hpp, PROTOCOL.md §5
// NVRTC_COMPILE): decode, check the caller's NVRTC and the program's eligibility, recompute the key,
// look it up; then, once compiled, the reply.
#include <daemon/ops/compile_request.hpp>

#include <spdlog/spdlog.h>

#include <daemon/ops/miss_record.hpp>
#include <proto/nvrtc_compile_messages.hpp>
#include <proto/nvrtc_daemon_eligibility.hpp>

namespace jitcache::daemon::ops {

using compile::OutcomeKind;
using proto::Status;
using stats::Counters;

namespace {

std::string identity_text(const proto::NvrtcIdentity& identity) {
  return "NVRTC " + std::to_string(identity.major) + "." + std::to_string(identity.minor) + " " +
         proto::to_hex(identity.library) + " " + proto::to_hex(identity.builtins);
}

Reply result_reply(proto::NvrtcCompileOrigin origin, const std::uint8_t* bytes, std::size_t size) {
  proto::NvrtcCompileReply reply;
  reply.origin = origin;
  reply.result.assign(bytes, bytes + size);
  return Reply{Status::ok, proto::encode(reply), nullptr, {}};
}

}  // namespace

std::variant<Reply, PendingNvrtcCompile> CompileRequests::begin_nvrtc(proto::Bytes payload,
                                                                      const store::Visibility& who,
                                                                      const policy::PeerCredentials& peer) {
  if (!m_nvrtc) return error_reply(Status::cannot_compile, "this daemon has no NVRTC of its own");
  auto request = proto::decode_nvrtc_compile_request(payload);
  if (!request) return error_reply(status_for(request.error()), request.error().message);
  Counters::add(m_counters.compile_requests);
  // Rationale: a client routes here only when the daemon's NVRTC is its own (the same bytes give the
  // same key); another NVRTC's answer would be filed under a key the caller never looks up.
  if (!(request->identity == m_nvrtc->identity)) {
    return error_reply(Status::cannot_compile, "nvrtc_identity: the daemon compiles with " +
                                                   identity_text(m_nvrtc->identity) + ", the caller's NVRTC is " +
                                                   identity_text(request->identity) + "; compile it yourself");
  }
  const std::uint64_t bytes = request->program.bytes() + request->include_record.size();
  if (bytes > m_max_ptx_bytes) {
    return error_reply(Status::too_large, "the NVRTC program is " + std::to_string(bytes) +
                                              " bytes, over compile_max_ptx (" + std::to_string(m_max_ptx_bytes) +
                                              "); compile it yourself");
  }
  auto input = proto::nvrtc_compile_input_of(request->program, m_nvrtc->identity, request->include_record);
  if (!input) return error_reply(Status::cannot_compile, "not eligible: " + input.error().message);
  if (auto refusal = proto::nvrtc_daemon_refusal(input->options, input->include_record)) {
    return error_reply(Status::cannot_compile, "not eligible: " + *refusal + "; compile it yourself");
  }
  auto key = proto::nvrtc_key(*input);
  if (!key) return error_reply(Status::bad_request, key.error().message);
  if (key->fields != request->claimed_key) {
    // Nothing is compiled or stored: the request's key is not the key of what it carries.
    spdlog::warn("NVRTC_COMPILE from {}: the claimed key is not the key of the program it carries", peer.describe());
    return error_reply(Status::bad_request, "the NVRTC_COMPILE key is not the key of the program it carries (" +
                                                proto::to_hex(proto::key_id(request->claimed_key)).substr(0, 16) +
                                                " claimed, " + proto::to_hex(proto::key_id(key->fields)).substr(0, 16) +
                                                " computed)");
  }
  PendingNvrtcCompile pending;
  pending.key = key->fields;
  pending.key_id = proto::key_id(pending.key);
  note_asked(pending.key.arch, pending.key.driver_api, pending.key.driver_build, who);

  auto found = m_store.lookup(store::Selector::key(pending.key), who);
  if (!found) {
    spdlog::error("NVRTC_COMPILE lookup: {}", found.error().message);
    return error_reply(status_for(found.error()), found.error().message);
  }
  if (auto* stored = std::get_if<store::Hit>(&*found)) {
    Counters::add(m_counters.compile_store_hits);
    Counters::add(m_counters.compile_microseconds_saved, stored->info.compile_time_us);
    Counters::add(m_counters.bytes_served, stored->image->size());
    return result_reply(proto::NvrtcCompileOrigin::stored, stored->image->data(), stored->image->size());
  }
  m_counters.recent_misses.record(miss_of_key(proto::Op::compile, std::get<store::Miss>(*found).reason,
                                              static_cast<std::uint32_t>(peer.uid), pending.key));
  pending.job = std::make_shared<const compile::NvrtcJob>(
      compile::NvrtcJob{m_nvrtc->library, m_nvrtc->identity, std::move(request->program)});
  pending.input.arch = pending.key.arch;
  pending.input.driver_api = pending.key.driver_api;
  pending.input.driver_build = pending.key.driver_build;
  pending.input.options = pending.key.options;
  pending.input.nvrtc = pending.job.get();
  m_sink.expect(pending.key_id, pending.key, key->content_fast);
  spdlog::debug("NVRTC_COMPILE key_id={} arch={} bytes={} peer {}", proto::to_hex(pending.key_id), pending.key.arch,
                bytes, peer.describe());
  return pending;
}

Reply CompileRequests::finish_nvrtc(const PendingNvrtcCompile& pending, const compile::CompileResult& result) {
  m_sink.release(pending.key_id);
  if (!result) return error_reply(status_for(result.error()), result.error().message);
  const compile::CompileOutcome& outcome = **result;
  switch (outcome.kind) {
    case OutcomeKind::compiled:
      Counters::add(m_counters.bytes_served, outcome.image.size());
      return result_reply(outcome.from_elsewhere ? proto::NvrtcCompileOrigin::stored
                                                 : proto::NvrtcCompileOrigin::compiled,
                          outcome.image.data(), outcome.image.size());
    case OutcomeKind::compile_error:  // never for NVRTC: its compile errors are results
    case OutcomeKind::refused:
      return error_reply(Status::cannot_compile,
                         std::string(compile::refusal_reason_name(outcome.refusal)) + ": " + outcome.message);
    case OutcomeKind::busy: return error_reply(Status::busy, outcome.message);
    case OutcomeKind::worker_failed: return worker_failed_reply(outcome);
  }
  return error_reply(Status::internal, "unknown compile outcome");
}

}  // namespace jitcache::daemon::ops
