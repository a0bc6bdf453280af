// COMPILE (PROTOCOL.md §5): the op table's asynchronous handler around CompileRequests.
#include <daemon/ops/request_handler.hpp>

#include <utility>
#include <variant>
#include <vector>

#include <boost/asio/use_awaitable.hpp>

#include <daemon/compile/async_compile.hpp>
#include <daemon/ops/compile_request.hpp>
#include <daemon/remote/defer_remote.hpp>

namespace jitcache::daemon::ops {

boost::asio::awaitable<Reply> RequestHandler::compile(OpCall& call) {
  CompileRequests& requests = *m_compile;
  // The request's bytes leave the connection: async_compile frees them once the service has taken
  // what it keeps (a new compile's job copies the PTX; a join keeps nothing), so no request holds
  // its source while it waits, which may be minutes. From then on the compile service's per-uid
  // limits (compile_queue_per_uid, compile_bytes_per_uid) count what is held, not the request bytes
  // budget.
  std::vector<std::uint8_t> request = std::exchange(call.bytes, {});
  // Decoding, digesting and the store lookup run here, on the worker, as a LOOKUP does; the compile
  // itself runs on the service's threads while this coroutine is suspended, so the worker thread
  // serves others. With a remote tier, the lookup here is the local store's alone
  // (remote/defer_remote.hpp): the remotes are asked on the compile thread, by the fleet gate,
  // before any compile.
  auto step = [&] {
    remote::DeferRemote local_only;
    return requests.begin(request, visibility_for(call.peer), call.peer);
  }();
  if (auto* reply = std::get_if<Reply>(&step)) co_return std::move(*reply);
  const PendingCompile& pending = std::get<PendingCompile>(step);
  call.budget.reset();
  // Rationale: nothing watches the socket while the compile runs, so a client that leaves is
  // noticed only when its reply cannot be written: it cancels nothing, and the compile is stored
  // for the next request (PROTOCOL.md §5 COMPILE).
  compile::CompileResult result =
      co_await compile::async_compile(requests.service(), pending.key_id, pending.input, pending.priority,
                                      static_cast<std::uint32_t>(call.peer.uid), std::move(request),
                                      boost::asio::use_awaitable);
  co_return requests.finish(pending, result);
}

}  // namespace jitcache::daemon::ops
