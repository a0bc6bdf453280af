// PUT (PROTOCOL.md §5): an image the client built, checked (image_check.hpp) and stored in the
// caller's namespace, or the shared one for a trusted caller.
#include <daemon/ops/request_handler.hpp>

#include <spdlog/spdlog.h>

#include <optional>
#include <string>
#include <variant>

#include <daemon/ops/compile_request.hpp>
#include <daemon/ops/explain_request.hpp>
#include <daemon/ops/image_check.hpp>
#include <daemon/ops/miss_record.hpp>
#include <daemon/ops/op_replies.hpp>
#include <daemon/publish/publisher.hpp>
#include <daemon/remote/defer_remote.hpp>
#include <daemon/remote/remote_check.hpp>
#include <daemon/stats/counter_table.hpp>
#include <daemon/stats/nvrtc_figures.hpp>
#include <daemon/stats/store_space.hpp>
#include <daemon/store/verify.hpp>
#include <proto/explain_messages.hpp>
#include <proto/remote_check_messages.hpp>

namespace jitcache::daemon::ops {

using proto::Op;
using proto::Status;
using stats::Counters;

Reply RequestHandler::put(OpCall& call) {
  const proto::Bytes payload = call.payload;
  const policy::PeerCredentials& peer = call.peer;
  auto request = proto::decode_put_request(payload);
  if (!request) return failure(request.error(), "PUT");
  if (auto valid = proto::validate_key(request->key); !valid) return failure(valid.error(), "PUT");
  if (request->image.empty()) return error_reply(Status::bad_request, "PUT carries an empty image");
  if (auto valid = check_entry_image(request->image, request->key); !valid) return failure(valid.error(), "PUT");
  // Every entry has a fast key (schema 7), so that a LOOKUP by fast key that finds nothing is final.
  if (!request->content_fast) {
    return error_reply(Status::bad_request,
                       "PUT without content_fast: every entry needs its fast key (the XXH3-128 "
                       "of its source, PROTOCOL.md §5 PUT)");
  }
  if (auto valid = proto::validate_fast_key(proto::fast_key_of(request->key, *request->content_fast)); !valid) {
    return failure(valid.error(), "PUT");
  }

  const store::Visibility who = visibility_for(peer);
  store::PutInput input;
  input.key = std::move(request->key);
  input.namespace_id = who.own_namespace;
  input.producer = std::move(request->producer);
  input.compile_time_us = request->compile_time_us;
  input.image = request->image;
  input.content_fast = *request->content_fast;
  auto outcome = m_stores.serving.put(input);
  if (!outcome) return failure(outcome.error(), "PUT");

  Counters::add(m_counters.puts);
  Counters::add(m_counters.put_bytes, input.image.size());
  stats::count_nvrtc_put(m_counters, input.key.options);
  if (m_publisher != nullptr) {
    m_publisher->stored(outcome->row_id, input.namespace_id, proto::fast_key_of(input.key, input.content_fast),
                        input.image);
  }
  spdlog::info("PUT key_id={} namespace={} arch={} driver={}/{} bytes={} replaced={} peer {}",
               proto::to_hex(outcome->key_id), input.namespace_id, input.key.arch, input.key.driver_api,
               input.key.driver_build, input.image.size(), outcome->replaced, peer.describe());
  proto::PutReply reply;
  reply.key_id = outcome->key_id;
  reply.namespace_id = input.namespace_id;
  reply.replaced = outcome->replaced;
  return ok_payload(reply);
}

}  // namespace jitcache::daemon::ops
