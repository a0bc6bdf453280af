// LOOKUP (PROTOCOL.md §5): a hit from the store (or its hot image cache), a miss recorded, or a
// LOOKUP deferred to the remote lane when a fleet tier must be asked (remote/defer_remote.hpp).
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

namespace {

// A LOOKUP hit, encoded only for the way the image travels: as bytes after the head, or, when the
// request asked for a descriptor (k_flag_image_fd) and the image is worth one, with the head that
// names its size (the connection sends the memfd, or falls back to image_as_bytes).
Reply hit_reply(store::Hit& hit, std::uint16_t flags) {
  const auto image_size = static_cast<std::uint32_t>(hit.image->size());
  if ((flags & proto::k_flag_image_fd) != 0 && hit.image->size() >= k_min_image_by_descriptor) {
    return Reply{Status::ok, proto::encode(proto::LookupReplyByDescriptor{hit.info, image_size}), std::move(hit.image),
                 true};
  }
  return Reply{Status::ok, proto::encode_lookup_reply_head(hit.info, image_size), std::move(hit.image), false};
}

}  // namespace

Reply RequestHandler::lookup(OpCall& call) {
  const proto::Bytes payload = call.payload;
  const policy::PeerCredentials& peer = call.peer;
  auto request = proto::decode_lookup_request(payload);
  if (!request) return failure(request.error(), "LOOKUP");
  const bool by_fast_key = request->selector == proto::LookupSelector::fast_key;
  std::optional<store::Selector> selector;
  if (request->selector == proto::LookupSelector::key) {
    if (auto valid = proto::validate_key(request->key); !valid) return failure(valid.error(), "LOOKUP");
    if (m_compile != nullptr) {
      m_compile->note_asked(request->key.arch, request->key.driver_api, request->key.driver_build,
                            visibility_for(peer));
    }
    selector = store::Selector::key(request->key);
  } else if (by_fast_key) {
    if (auto valid = proto::validate_fast_key(request->fast_key); !valid) return failure(valid.error(), "LOOKUP");
    Counters::add(m_counters.fast_key_lookups);
    if (m_compile != nullptr) {
      m_compile->note_asked(request->fast_key.arch, request->fast_key.driver_api, request->fast_key.driver_build,
                            visibility_for(peer));
    }
    selector = store::Selector::fast_key(request->fast_key);
  } else {
    selector = store::Selector::key_id_prefix(request->key_id_prefix);
  }
  auto found = m_stores.serving.lookup(*selector, visibility_for(peer));
  // Not this LOOKUP's answer: the connection asks again on the remote lane (defer_remote.hpp).
  if (remote::DeferRemote::deferred_here()) return error_reply(Status::not_found, "asked of the remotes");
  if (!found) return failure(found.error(), "LOOKUP");
  // The search ends here, whichever the selector: every entry has a fast key, so a fast-key miss is
  // final (PROTOCOL.md §5 LOOKUP), and each LOOKUP counts one hit or one miss.
  if (const auto* miss = std::get_if<store::Miss>(&*found)) {
    Counters::add(m_counters.misses);
    if (miss->reason == store::MissReason::quarantined) Counters::add(m_counters.misses_quarantined);
    if (miss->reason == store::MissReason::corrupt) Counters::add(m_counters.misses_corrupt);
    if (request->selector != proto::LookupSelector::key_id_prefix) {
      stats::count_nvrtc_miss(m_counters, by_fast_key ? request->fast_key.options : request->key.options, miss->reason);
    }
    const auto uid = static_cast<std::uint32_t>(peer.uid);
    if (request->selector == proto::LookupSelector::key) {
      m_counters.recent_misses.record(miss_of_key(Op::lookup, miss->reason, uid, request->key));
    } else if (by_fast_key) {
      m_counters.recent_misses.record(miss_of_fast_key(miss->reason, uid, request->fast_key));
    }
    return error_reply(Status::not_found, "no entry for this key");
  }
  store::Hit& hit = std::get<store::Hit>(*found);
  Counters::add(m_counters.hits);
  if (by_fast_key) Counters::add(m_counters.fast_key_hits);
  Counters::add(m_counters.compile_microseconds_saved, hit.info.compile_time_us);
  stats::count_nvrtc_hit(m_counters, hit.info.key.options, hit.info.compile_time_us);
  Counters::add(m_counters.bytes_served, hit.image->size());
  // Only a hit by fast key names the file; clients look up by fast key, so that is every entry
  // they use. The publisher's thread writes the file: the reply does not wait for it.
  if (by_fast_key && m_publisher != nullptr) m_publisher->served(hit, request->fast_key, selector->id());
  return hit_reply(hit, call.flags);
}

}  // namespace jitcache::daemon::ops
