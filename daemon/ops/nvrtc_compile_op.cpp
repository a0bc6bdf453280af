// NVRTC_COMPILE (PROTOCOL.md §5 NVRTC_COMPILE): the op table's asynchronous handler around
// CompileRequests::begin_nvrtc and finish_nvrtc, awaiting the compile service as COMPILE does
// (compile_op.cpp).
#include <daemon/ops/request_handler.hpp>

#include <utility>
#include <variant>
#include <vector>

#include <boost/asio/use_awaitable.hpp>

#include <daemon/compile/async_compile.hpp>
#include <daemon/ops/compile_request.hpp>
#include <daemon/remote/defer_remote.hpp>

namespace jitcache::daemon::ops {

boost::asio::awaitable<Reply> RequestHandler::nvrtc_compile(OpCall& call) {
  CompileRequests& requests = *m_compile;
  // The program is copied into the pending job (the worker needs it whole), so the request's bytes
  // go at once, as COMPILE's do.
  std::vector<std::uint8_t> request = std::exchange(call.bytes, {});
  auto step = [&] {
    remote::DeferRemote local_only;
    return requests.begin_nvrtc(request, visibility_for(call.peer), call.peer);
  }();
  if (auto* reply = std::get_if<Reply>(&step)) co_return std::move(*reply);
  const PendingNvrtcCompile& pending = std::get<PendingNvrtcCompile>(step);
  call.budget.reset();
  compile::CompileResult result =
      co_await compile::async_compile(requests.service(), pending.key_id, pending.input, compile::Priority::interactive,
                                      static_cast<std::uint32_t>(call.peer.uid), std::move(request),
                                      boost::asio::use_awaitable);
  co_return requests.finish_nvrtc(pending, result);
}

}  // namespace jitcache::daemon::ops
