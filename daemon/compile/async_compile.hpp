// async_compile: CompileService::submit for Boost.Asio callers, e.g. a connection's coroutine:
//
//   auto result = co_await compile::async_compile(service, key_id, input, Priority::interactive,
//                                                 asio::use_awaitable);
//   if (!result) ...;            // a malformed request (ErrorCode::invalid_argument)
//   const CompileOutcome& outcome = **result;
//
// The completion runs on the handler's associated executor (the connection's worker), never on a
// compile thread, and the outcome is shared with the compile's other waiters (read-only). A waiter
// whose client went away still gets its completion; it just has nobody to answer. input.ptx must
// stay valid until the operation is initiated (with use_awaitable: until the co_await starts);
// the service copies what it keeps (only a new compile keeps anything: its job's PTX).
// Thread safety: as CompileService::submit.
#pragma once

// Boost 1.74's awaitable.hpp uses std::exchange without including <utility>.
#include <utility>

#include <boost/asio/associated_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/execution/outstanding_work.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/prefer.hpp>

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include <common/result.hpp>

#include <daemon/compile/compile_service.hpp>

namespace jitcache::daemon::compile {

using CompileResult = common::Result<CompileOutcomePtr>;

// `tenant` and `ptx_owner` as CompileService::submit's tenant, and the buffer input.ptx views:
// it is freed as soon as submit returns, so a request that waits for its compile (a join above all)
// holds no copy of its source while it waits.
template <class CompletionToken>
auto async_compile(CompileService& service, const proto::Digest256& key_id, const CompileInput& input,
                   Priority priority, std::optional<std::uint32_t> tenant, std::vector<std::uint8_t> ptx_owner,
                   CompletionToken&& token) {
  namespace asio = boost::asio;
  return asio::async_initiate<CompletionToken, void(CompileResult)>(
      [&service](auto handler, const proto::Digest256& key, const CompileInput& in, Priority p,
                 std::optional<std::uint32_t> who, [[maybe_unused]] std::vector<std::uint8_t> owner) {
        using Handler = decltype(handler);
        // Rationale: the work guard (outstanding_work.tracked) keeps the caller's io_context running
        // while a compile thread holds the completion; std::function needs a copyable callable,
        // hence the shared_ptr around the move-only handler.
        auto executor = asio::prefer(asio::get_associated_executor(handler), asio::execution::outstanding_work.tracked);
        auto shared = std::make_shared<Handler>(std::move(handler));
        auto complete = [shared, executor](CompileResult result) {
          asio::post(executor,
                     [shared, result = std::move(result)]() mutable { std::move (*shared)(std::move(result)); });
        };
        auto ticket = service.submit(
            key, in, p, [complete](CompileOutcomePtr outcome) { complete(CompileResult(std::move(outcome))); }, who);
        if (!ticket) complete(CompileResult(ticket.error()));
        // `owner` dies here. Rationale: it is taken by value because asio moves the arguments into
        // this call (use_awaitable keeps only the moved-from copies in its frame until the
        // completion), so the buffer goes now, not after the wait.
      },
      token, key_id, input, priority, tenant, std::move(ptx_owner));
}

template <class CompletionToken>
auto async_compile(CompileService& service, const proto::Digest256& key_id, const CompileInput& input,
                   Priority priority, CompletionToken&& token) {
  return async_compile(service, key_id, input, priority, std::nullopt, {}, std::forward<CompletionToken>(token));
}

}  // namespace jitcache::daemon::compile
