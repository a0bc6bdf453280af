// async_compile: CompileService::submit for Boost.Asio callers, e.g. a connection's coroutine:
//
//   auto result = co_await compile::async_compile(service, key_id, input, Priority::interactive,
//                                                 asio::use_awaitable);
//   if (!result) ...;            // a malformed request (ErrorCode::invalid_argument)
//   const CompileOutcome& outcome = **result;
//
// The completion runs on the handler's associated executor (the connection's strand), never on a
// compile thread, and the outcome is shared with the compile's other waiters (read-only). A waiter
// whose client went away still gets its completion; it just has nobody to answer. input.ptx must
// stay valid until the operation is initiated (with use_awaitable: until the co_await starts);
// the service copies what it keeps.
// Thread safety: as CompileService::submit.
#pragma once

// Boost 1.74's awaitable.hpp uses std::exchange without including <utility>.
#include <utility>

#include <boost/asio/associated_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/execution/outstanding_work.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/prefer.hpp>

#include <memory>

#include <jitcache/proto/result.hpp>

#include <daemon/compile/compile_service.hpp>

namespace jitcache::daemon::compile {

using CompileResult = proto::Result<CompileOutcomePtr>;

template <class CompletionToken>
auto async_compile(CompileService& service, const proto::Digest256& key_id, const CompileInput& input,
                   Priority priority, CompletionToken&& token) {
  namespace asio = boost::asio;
  return asio::async_initiate<CompletionToken, void(CompileResult)>(
      [&service](auto handler, const proto::Digest256& key, const CompileInput& in, Priority p) {
        using Handler = decltype(handler);
        // Rationale: the work guard (outstanding_work.tracked) keeps the caller's io_context running
        // while a compile thread holds the completion; std::function needs a copyable callable,
        // hence the shared_ptr around the move-only handler.
        auto executor = asio::prefer(asio::get_associated_executor(handler), asio::execution::outstanding_work.tracked);
        auto shared = std::make_shared<Handler>(std::move(handler));
        auto complete = [shared, executor](CompileResult result) {
          asio::post(executor, [shared, result = std::move(result)]() mutable { std::move(*shared)(std::move(result)); });
        };
        auto ticket =
            service.submit(key, in, p, [complete](CompileOutcomePtr outcome) { complete(CompileResult(std::move(outcome))); });
        if (!ticket) complete(CompileResult(ticket.error()));
      },
      token, key_id, input, priority);
}

}  // namespace jitcache::daemon::compile
