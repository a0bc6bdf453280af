#include <daemon/ops/compile_request.hpp>

#include <daemon/ops/miss_record.hpp>

#include <chrono>
#include <cstring>

#include <spdlog/spdlog.h>

#include <proto/content_digest.hpp>

namespace jitcache::daemon::ops {

using compile::OutcomeKind;
using proto::Status;
using stats::Counters;

namespace {

std::int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// The first line of a compiler log, for the one-line message beside the full log.
std::string first_line(const std::string& log) {
  const auto end = log.find('\n');
  return end == std::string::npos ? log : log.substr(0, end);
}

}  // namespace

std::variant<Reply, PendingCompile> CompileRequests::begin(proto::Bytes payload, const store::Visibility& who,
                                                           const policy::PeerCredentials& peer) {
  auto request = proto::decode_compile_request(payload);
  if (!request) return error_reply(status_for(request.error()), request.error().message);
  const bool link = !request->link_inputs.empty();
  PendingCompile pending;
  proto::Checksum128 content_fast;
  if (link) {
    // A link's inputs are the program's bytes as its linker took them (PTX with or without its NUL,
    // cubins, libraries): each must hold something, and all of them count against compile_max_ptx.
    std::uint64_t bytes = 0;
    for (std::size_t i = 0; i < request->link_inputs.size(); ++i) {
      if (request->link_inputs[i].data.empty()) {
        return error_reply(Status::bad_request, "COMPILE link input " + std::to_string(i) + " is empty");
      }
      bytes += request->link_inputs[i].data.size();
    }
    if (bytes > m_max_ptx_bytes) {
      return error_reply(Status::too_large, "the COMPILE link inputs are " + std::to_string(bytes) +
                                                " bytes, over compile_max_ptx (" + std::to_string(m_max_ptx_bytes) +
                                                "); link it yourself");
    }
    pending.key = proto::key_of(*request, proto::link_content_of(*request));
    content_fast = proto::link_content_fast_of(*request);
  } else {
    if (request->ptx.empty()) return error_reply(Status::bad_request, "COMPILE carries an empty PTX");
    if (request->ptx.size() > m_max_ptx_bytes) {
      return error_reply(Status::too_large, "the COMPILE PTX is " + std::to_string(request->ptx.size()) +
                                                " bytes, over compile_max_ptx (" + std::to_string(m_max_ptx_bytes) +
                                                "); build it with the driver's own JIT");
    }
    if (const void* nul = std::memchr(request->ptx.data(), 0, request->ptx.size()); nul != nullptr) {
      // PTX is text: a NUL byte means binary data (a cubin, a fat binary) or a buffer sent with its
      // terminator, and the key's digest would not be of what a driver loads.
      const auto offset = static_cast<const std::uint8_t*>(nul) - request->ptx.data();
      return error_reply(Status::bad_request,
                         "the COMPILE PTX has a NUL byte at offset " + std::to_string(offset) + ": not PTX text");
    }
    pending.key = proto::key_of(*request, proto::content_digest(request->ptx));
    content_fast = proto::xxh3_128(request->ptx);
  }
  if (auto valid = proto::validate_key(pending.key); !valid) {
    return error_reply(Status::bad_request, valid.error().message);
  }
  pending.key_id = proto::key_id(pending.key);
  Counters::add(m_counters.compile_requests);
  note_asked(pending.key.arch, pending.key.driver_api, pending.key.driver_build, who);

  // By the whole key, so its driver is noted as in use, as a LOOKUP's is. Not a hit or a miss in
  // STATS: the LOOKUP before this COMPILE was counted already (PROTOCOL.md §5 LOOKUP).
  auto found = m_store.lookup(store::Selector::key(pending.key), who);
  if (!found) {
    spdlog::error("COMPILE lookup: {}", found.error().message);
    return error_reply(status_for(found.error()), found.error().message);
  }
  if (auto* stored = std::get_if<store::Hit>(&*found)) {
    store::Hit& hit = *stored;
    Counters::add(m_counters.compile_store_hits);
    Counters::add(m_counters.compile_microseconds_saved, hit.info.compile_time_us);
    Counters::add(m_counters.bytes_served, hit.image->size());
    return Reply{Status::ok,
                 proto::encode_compile_reply_head(proto::CompileOrigin::stored, hit.info,
                                                  static_cast<std::uint32_t>(hit.image->size())),
                 std::move(hit.image),
                 {}};
  }

  m_counters.recent_misses.record(miss_of_key(proto::Op::compile, std::get<store::Miss>(*found).reason,
                                              static_cast<std::uint32_t>(peer.uid), pending.key));
  pending.input.arch = pending.key.arch;
  pending.input.driver_api = pending.key.driver_api;
  pending.input.driver_build = pending.key.driver_build;
  pending.input.options = pending.key.options;
  pending.input.ptx = request->ptx;
  pending.link_inputs = std::make_shared<const std::vector<proto::CompileLinkInput>>(std::move(request->link_inputs));
  pending.input.link_inputs = *pending.link_inputs;
  pending.priority =
      request->priority == proto::CompilePriority::warm ? compile::Priority::warm : compile::Priority::interactive;
  m_sink.expect(pending.key_id, pending.key, content_fast);
  spdlog::debug("COMPILE key_id={} arch={} bytes={} inputs={} priority={} peer {}", proto::to_hex(pending.key_id),
                pending.key.arch, pending.input.source_bytes(), link ? pending.link_inputs->size() : 1,
                pending.priority == compile::Priority::warm ? "warm" : "interactive", peer.describe());
  return pending;
}

Reply CompileRequests::finish(const PendingCompile& pending, const compile::CompileResult& result) {
  m_sink.release(pending.key_id);
  if (!result) return error_reply(status_for(result.error()), result.error().message);
  return answer(pending, **result);
}

Reply worker_failed_reply(const compile::CompileOutcome& outcome) {
  return error_reply(proto::Status::worker_failed,
                     std::string(compile::worker_failure_name(outcome.failure)) + ": " + outcome.message +
                         (outcome.from_negative_cache ? " (a remembered failure: not compiled again)" : ""));
}

Reply CompileRequests::answer(const PendingCompile& pending, const compile::CompileOutcome& outcome) {
  switch (outcome.kind) {
    case OutcomeKind::compiled: {
      proto::EntryInfo info;
      info.key_id = pending.key_id;
      info.key = pending.key;
      info.namespace_id = store::k_shared_namespace;
      info.producer = outcome.producer;
      info.codec = static_cast<std::uint8_t>(store::Codec::raw);
      info.raw_size = info.stored_size = outcome.image.size();
      info.checksum = proto::xxh3_128(proto::Bytes(outcome.image));
      info.created_at_ms = info.last_used_at_ms = now_ms();
      info.compile_time_us = outcome.compile_time_us;
      // Rationale: one copy per waiter into the buffer type the connection sends from; a compile
      // costs seconds, the copy microseconds per megabyte.
      auto image = std::make_shared<store::ImageBuffer>(outcome.image.begin(), outcome.image.end());
      Counters::add(m_counters.bytes_served, image->size());
      return Reply{Status::ok,
                   proto::encode_compile_reply_head(outcome.from_elsewhere ? proto::CompileOrigin::stored
                                                                           : proto::CompileOrigin::compiled,
                                                    info, static_cast<std::uint32_t>(image->size())),
                   std::move(image),
                   {}};
    }
    case OutcomeKind::compile_error: {
      proto::CompileErrorReply reply;
      reply.message = "the PTX failed to compile with " + outcome.producer + ": " + first_line(outcome.message) +
                      (outcome.from_negative_cache ? " (a remembered failure: not compiled again)" : "");
      reply.log = outcome.message;
      return Reply{Status::compile_error, proto::encode(reply), nullptr, {}};
    }
    case OutcomeKind::refused:
      return error_reply(Status::cannot_compile, std::string(compile::refusal_reason_name(outcome.refusal)) + ": " +
                                                     outcome.message + "; build it with the driver's own JIT");
    case OutcomeKind::busy: return error_reply(Status::busy, outcome.message);
    case OutcomeKind::worker_failed: return worker_failed_reply(outcome);
  }
  return error_reply(Status::internal, "unknown compile outcome");
}

}  // namespace jitcache::daemon::ops
