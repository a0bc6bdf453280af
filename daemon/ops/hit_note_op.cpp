// HIT_NOTE (PROTOCOL.md §5, §8): a client loaded a published image without a LOOKUP.
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

Reply RequestHandler::hit_note(OpCall& call) {
  const proto::Bytes payload = call.payload;
  auto request = proto::decode_hit_note_request(payload);
  if (!request) return failure(request.error(), "HIT_NOTE");
  if (auto valid = proto::validate_fast_key(request->fast_key); !valid) return failure(valid.error(), "HIT_NOTE");
  // Counted as the LOOKUP it replaced would have been: the driver is in use, the entry was hit
  // (hits, last use for eviction, compile time saved). The client does not wait for this reply.
  m_stores.maintenance.note_driver_asked(
      store::AskedDriver{request->fast_key.driver_api, request->fast_key.driver_build});
  const proto::Digest256 fast_key_id = proto::fast_key_id(request->fast_key);
  auto found = m_stores.publish_source.note_published_hit(fast_key_id);
  if (!found) return failure(found.error(), "HIT_NOTE");
  // An entry gone since the client read its file is not an error: the client's load is done.
  if (found->has_value()) {
    if (m_publisher != nullptr) m_publisher->note_used(fast_key_id);
    Counters::add(m_counters.hits);
    Counters::add(m_counters.published_hits);
    Counters::add(m_counters.compile_microseconds_saved, (*found)->compile_time_us);
    stats::count_nvrtc_hit(m_counters, request->fast_key.options, (*found)->compile_time_us);
  }
  return Reply{};
}

}  // namespace jitcache::daemon::ops
