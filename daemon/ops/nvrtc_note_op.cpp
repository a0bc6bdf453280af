// NVRTC_NOTE (PROTOCOL.md §5 NVRTC_NOTE): a client's NVRTC compile that the cache could not serve,
// counted by its reason (daemon/stats/nvrtc_figures.hpp). The note moves that counter and nothing
// else, so any caller may send it, as any caller may send LOOKUPs that count misses.
#include <daemon/ops/op_replies.hpp>
#include <daemon/ops/request_handler.hpp>
#include <daemon/stats/nvrtc_figures.hpp>
#include <proto/nvrtc_note_messages.hpp>

namespace jitcache::daemon::ops {

Reply RequestHandler::nvrtc_note(OpCall& call) {
  auto request = proto::decode_nvrtc_note_request(call.payload);
  if (!request) return failure(request.error(), "NVRTC_NOTE");
  stats::Counters::add(stats::nvrtc_uncached_counter(m_counters, request->reason));
  return Reply{};
}

}  // namespace jitcache::daemon::ops
