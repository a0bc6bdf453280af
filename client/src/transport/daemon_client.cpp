#include <client/src/transport/daemon_client.hpp>

#include <algorithm>
#include <string>

#include <common/result.hpp>
#include <proto/status_codes.hpp>

namespace jitcache::client::transport {

using common::ErrorCode;
using common::make_error;
using proto::Op;
using proto::Status;

namespace {

Result<std::optional<FetchedImage>> fetched_by_descriptor(const Reply& reply) {
  auto decoded = proto::decode_lookup_reply_by_descriptor(Bytes(reply.payload));
  JITCACHE_TRY(decoded);
  if (!reply.descriptor)
    return make_error(ErrorCode::corrupt, "jitcached's reply says it carries an image descriptor, but none came");
  if (decoded->image_size != decoded->info.raw_size) {
    return make_error(ErrorCode::corrupt, "the image descriptor's size (" + std::to_string(decoded->image_size) +
                                              ") is not the entry's (" + std::to_string(decoded->info.raw_size) + ")");
  }
  auto mapped = MappedImage::map(reply.descriptor.get(), decoded->image_size);
  JITCACHE_TRY(mapped);
  if (proto::xxh3_128(mapped->bytes()) != decoded->info.checksum) {
    return make_error(ErrorCode::corrupt, "the image in the descriptor jitcached sent does not match its checksum");
  }
  FetchedImage fetched;
  fetched.info = std::move(decoded->info);
  fetched.mapped = std::move(*mapped);
  fetched.checksum_verified = true;
  return std::optional<FetchedImage>(std::move(fetched));
}

}  // namespace

bool repeatable_after_loss(Op op) {
  switch (op) {
    case Op::hello:
    case Op::ping:
    case Op::lookup:
    case Op::put:
    case Op::stats:
    case Op::list:
    case Op::compile:
    case Op::report_failure:
    case Op::remote_check:
    case Op::explain:
    case Op::misses: return true;
    default: return false;
  }
}

namespace {

// Whether a call's outcome is worth one more try on a fresh connection (header comment).
bool worth_another_connection(Op op, const Result<Reply>& reply, CallLoss loss) {
  if (reply) return reply->header.status == Status::unavailable && repeatable_after_loss(op);
  if (reply.error().reply_status != 0) return false;
  return loss == CallLoss::while_sending || (loss == CallLoss::while_awaiting_reply && repeatable_after_loss(op));
}

}  // namespace

Result<Reply> DaemonClient::exchange(Op op, const proto::Payload& payload, Bytes tail, Bytes trailer,
                                     std::uint16_t flags, std::chrono::milliseconds timeout) {
  auto reply = m_connection.call(op, payload, tail, trailer, flags, timeout);
  if (!worth_another_connection(op, reply, m_connection.last_loss())) return reply;
  auto fresh = UnixConnection::connect(m_connection.options());
  if (!fresh) {
    const std::string first = reply ? "it answered unavailable" : reply.error().message;
    return make_error(fresh.error().code, first + "; connecting again: " + fresh.error().message);
  }
  m_connection = std::move(*fresh);
  return m_connection.call(op, payload, tail, trailer, flags, timeout);
}

Result<DaemonClient> DaemonClient::connect(const ConnectOptions& options) {
  auto connection = UnixConnection::connect(options);
  JITCACHE_TRY(connection);
  return DaemonClient(std::move(*connection));
}

common::Error DaemonClient::status_error(const Reply& reply) {
  auto message = proto::decode_error_message(Bytes(reply.payload));
  std::string text = std::string(proto::status_name(reply.header.status)) + ": " +
                     (message ? *message : std::string("(unreadable error message)"));
  common::Error error = make_error(proto::error_code_for(reply.header.status), std::move(text));
  error.reply_status = static_cast<std::uint16_t>(reply.header.status);
  return error;
}

Result<Reply> DaemonClient::ok_reply(Op op, const proto::Payload& payload, Bytes tail, Bytes trailer,
                                     std::uint16_t flags) {
  auto reply = exchange(op, payload, tail, trailer, flags);
  JITCACHE_TRY(reply);
  if (reply->header.status == Status::ok) return reply;
  return status_error(*reply);
}

Result<proto::HelloReply> DaemonClient::hello(const std::string& client_name) {
  proto::HelloRequest request;
  request.client_name = client_name;
  auto reply = ok_reply(Op::hello, proto::encode(request));
  JITCACHE_TRY(reply);
  auto hello = proto::decode_hello_reply(Bytes(reply->payload));
  JITCACHE_TRY(hello);
  // Rationale: the daemon never accepts a frame above 1 GiB (its configuration's ceiling), so a
  // larger claim is not believed; 64 KiB covers a LOOKUP reply's metadata beyond the image.
  constexpr std::uint64_t k_metadata_room = 64 << 10;
  constexpr std::uint64_t k_largest_believed = 1ull << 30;
  m_connection.set_max_reply_bytes(std::min(hello->max_frame_bytes, k_largest_believed) + k_metadata_room);
  return hello;
}

Result<void> DaemonClient::ping() {
  auto reply = ok_reply(Op::ping, {});
  JITCACHE_TRY(reply);
  return proto::decode_empty(Bytes(reply->payload), "PING reply");
}

Result<std::optional<FetchedImage>> DaemonClient::lookup_with(const proto::LookupRequest& request,
                                                              ImageDelivery delivery) {
  const std::uint16_t flags = delivery == ImageDelivery::descriptor_if_large ? proto::k_flag_image_fd : 0;
  auto reply = ok_reply(Op::lookup, proto::encode(request), {}, {}, flags);
  if (!reply) {
    if (reply.error().code == ErrorCode::not_found) return std::optional<FetchedImage>();
    return reply.error();
  }
  if ((reply->header.flags & proto::k_flag_image_fd) != 0) {
    if (flags == 0) return make_error(ErrorCode::corrupt, "jitcached sent an image descriptor nobody asked for");
    return fetched_by_descriptor(*reply);
  }
  auto decoded = proto::decode_lookup_reply(Bytes(reply->payload));
  JITCACHE_TRY(decoded);
  if (decoded->image.size() != decoded->info.raw_size || proto::xxh3_128(decoded->image) != decoded->info.checksum) {
    return make_error(ErrorCode::corrupt, "the image jitcached sent does not match its size and checksum");
  }
  FetchedImage fetched;
  fetched.info = std::move(decoded->info);
  fetched.checksum_verified = true;
  // Rationale: the image is the tail of the payload; moving the payload and dropping its head
  // (a few hundred bytes of metadata) reuses memory already touched, where a copy into a fresh
  // buffer would page-fault and copy every byte of a megabyte-sized cubin again.
  const auto offset = static_cast<std::size_t>(decoded->image.data() - reply->payload.data());
  const auto size = decoded->image.size();
  fetched.image = std::move(reply->payload);
  fetched.image.erase(fetched.image.begin(), fetched.image.begin() + static_cast<std::ptrdiff_t>(offset));
  fetched.image.resize(size);
  return std::optional<FetchedImage>(std::move(fetched));
}

std::string_view compile_answer_name(CompileAnswer::Kind kind) {
  switch (kind) {
    case CompileAnswer::Kind::compiled: return "compiled";
    case CompileAnswer::Kind::compile_error: return "compile_error";
    case CompileAnswer::Kind::cannot_compile: return "cannot_compile";
    case CompileAnswer::Kind::busy: return "busy";
    case CompileAnswer::Kind::worker_failed: return "worker_failed";
  }
  return "unknown";
}

Result<CompileAnswer> DaemonClient::compile(const proto::CompileRequest& request, std::chrono::milliseconds timeout) {
  auto reply = exchange(Op::compile, proto::encode_compile_request_head(request), request.ptx, {}, 0, timeout);
  JITCACHE_TRY(reply);
  CompileAnswer answer;
  switch (reply->header.status) {
    case Status::ok: {
      auto decoded = proto::decode_compile_reply(Bytes(reply->payload));
      JITCACHE_TRY(decoded);
      if (decoded->image.size() != decoded->info.raw_size ||
          proto::xxh3_128(decoded->image) != decoded->info.checksum) {
        return make_error(ErrorCode::corrupt, "the image jitcached compiled does not match its size and checksum");
      }
      FetchedImage fetched;
      fetched.info = std::move(decoded->info);
      fetched.image.assign(decoded->image.begin(), decoded->image.end());
      fetched.checksum_verified = true;
      answer.kind = CompileAnswer::Kind::compiled;
      answer.from_store = decoded->origin == proto::CompileOrigin::stored;
      answer.image = std::move(fetched);
      return answer;
    }
    case Status::compile_error: {
      auto decoded = proto::decode_compile_error_reply(Bytes(reply->payload));
      JITCACHE_TRY(decoded);
      answer.kind = CompileAnswer::Kind::compile_error;
      answer.message = std::move(decoded->message);
      answer.log = std::move(decoded->log);
      return answer;
    }
    case Status::cannot_compile: answer.kind = CompileAnswer::Kind::cannot_compile; break;
    case Status::busy: answer.kind = CompileAnswer::Kind::busy; break;
    case Status::worker_failed: answer.kind = CompileAnswer::Kind::worker_failed; break;
    default: return status_error(*reply);
  }
  auto message = proto::decode_error_message(Bytes(reply->payload));
  JITCACHE_TRY(message);
  answer.message = std::move(*message);
  return answer;
}

Result<std::optional<FetchedImage>> DaemonClient::lookup(const proto::KeyFields& key, ImageDelivery delivery) {
  proto::LookupRequest request;
  request.selector = proto::LookupSelector::key;
  request.key = key;
  return lookup_with(request, delivery);
}

Result<std::optional<FetchedImage>> DaemonClient::lookup_by_id(const std::string& key_id_prefix) {
  proto::LookupRequest request;
  request.selector = proto::LookupSelector::key_id_prefix;
  request.key_id_prefix = key_id_prefix;
  return lookup_with(request, ImageDelivery::bytes);
}

Result<std::optional<FetchedImage>> DaemonClient::lookup_fast(const proto::FastKey& key, ImageDelivery delivery) {
  proto::LookupRequest request;
  request.selector = proto::LookupSelector::fast_key;
  request.fast_key = key;
  return lookup_with(request, delivery);
}

Result<void> DaemonClient::hit_note(const proto::FastKey& fast_key) {
  JITCACHE_TRY(ok_reply(Op::hit_note, proto::encode(proto::HitNoteRequest{fast_key})));
  return {};
}

Result<void> DaemonClient::nvrtc_note(proto::NvrtcUncachedReason reason) {
  JITCACHE_TRY(ok_reply(Op::nvrtc_note, proto::encode(proto::NvrtcNoteRequest{reason})));
  return {};
}

Result<proto::NvrtcCompileReply> DaemonClient::nvrtc_compile(const proto::NvrtcCompileRequest& request,
                                                             std::chrono::milliseconds timeout) {
  auto reply = exchange(Op::nvrtc_compile, proto::encode(request), {}, {}, 0, timeout);
  JITCACHE_TRY(reply);
  if (reply->header.status != Status::ok) return status_error(*reply);
  return proto::decode_nvrtc_compile_reply(Bytes(reply->payload));
}

Result<proto::PutReply> DaemonClient::put(const proto::PutRequest& request) {
  const proto::Payload trailer = proto::encode_put_request_trailer(request);
  auto reply = ok_reply(Op::put, proto::encode_put_request_head(request), request.image, Bytes(trailer));
  JITCACHE_TRY(reply);
  return proto::decode_put_reply(Bytes(reply->payload));
}

Result<proto::StatsReply> DaemonClient::stats() {
  auto reply = ok_reply(Op::stats, {});
  JITCACHE_TRY(reply);
  return proto::decode_stats_reply(Bytes(reply->payload));
}

Result<proto::ListReply> DaemonClient::list(const proto::ListRequest& request) {
  auto reply = ok_reply(Op::list, proto::encode(request));
  JITCACHE_TRY(reply);
  return proto::decode_list_reply(Bytes(reply->payload));
}

Result<proto::RemoveReply> DaemonClient::remove(const std::string& key_id_prefix) {
  proto::RemoveRequest request;
  request.key_id_prefix = key_id_prefix;
  auto reply = ok_reply(Op::remove, proto::encode(request));
  JITCACHE_TRY(reply);
  return proto::decode_remove_reply(Bytes(reply->payload));
}

Result<proto::GcReply> DaemonClient::gc() {
  auto reply = ok_reply(Op::gc, {});
  JITCACHE_TRY(reply);
  return proto::decode_gc_reply(Bytes(reply->payload));
}

Result<proto::VerifyReply> DaemonClient::verify(std::chrono::milliseconds timeout) {
  auto reply = exchange(Op::verify, {}, {}, {}, 0, timeout);
  JITCACHE_TRY(reply);
  if (reply->header.status != Status::ok) return status_error(*reply);
  return proto::decode_verify_reply(Bytes(reply->payload));
}

Result<proto::RemoteCheckReply> DaemonClient::remote_check(bool probe) {
  auto reply = ok_reply(Op::remote_check, proto::encode(proto::RemoteCheckRequest{probe}));
  JITCACHE_TRY(reply);
  return proto::decode_remote_check_reply(Bytes(reply->payload));
}

Result<proto::ExplainReply> DaemonClient::explain(const proto::ExplainRequest& request) {
  auto reply = ok_reply(Op::explain, proto::encode(request));
  JITCACHE_TRY(reply);
  return proto::decode_explain_reply(Bytes(reply->payload));
}

Result<proto::MissesReply> DaemonClient::misses(std::uint32_t limit) {
  auto reply = ok_reply(Op::misses, proto::encode(proto::MissesRequest{limit}));
  JITCACHE_TRY(reply);
  return proto::decode_misses_reply(Bytes(reply->payload));
}

Result<proto::ExportBundleReply> DaemonClient::export_bundle(const proto::ExportBundleRequest& request, int fd,
                                                             std::chrono::milliseconds timeout) {
  // Rationale: never sent twice on another connection: the file holds what the first run wrote.
  auto reply = m_connection.call_with_descriptor(Op::export_bundle, proto::encode(request), fd, timeout);
  JITCACHE_TRY(reply);
  if (reply->header.status != Status::ok) return status_error(*reply);
  return proto::decode_export_bundle_reply(Bytes(reply->payload));
}

Result<proto::ImportBundleReply> DaemonClient::import_bundle(const proto::ImportBundleRequest& request, int fd,
                                                             std::chrono::milliseconds timeout) {
  auto reply = m_connection.call_with_descriptor(Op::import_bundle, proto::encode(request), fd, timeout);
  JITCACHE_TRY(reply);
  if (reply->header.status != Status::ok) return status_error(*reply);
  return proto::decode_import_bundle_reply(Bytes(reply->payload));
}

Result<std::optional<proto::ReportFailureReply>> DaemonClient::report_failure(
    const proto::ReportFailureRequest& request) {
  auto reply = ok_reply(Op::report_failure, proto::encode(request));
  if (!reply) {
    if (reply.error().code == ErrorCode::not_found) return std::optional<proto::ReportFailureReply>();
    return reply.error();
  }
  auto decoded = proto::decode_report_failure_reply(Bytes(reply->payload));
  JITCACHE_TRY(decoded);
  return std::optional<proto::ReportFailureReply>(*decoded);
}

}  // namespace jitcache::client::transport
