// run_on(pool, fn): from a connection's coroutine, run fn on another executor (the store's reader
// pool or its single writer) and resume the coroutine on its own executor with fn's result. This is how
// store work stays off the I/O threads that run the accept loop.
// Thread safety: fn runs on the pool; the coroutine resumes on its own executor.
#pragma once

// Boost 1.74's awaitable.hpp uses std::exchange without including <utility>.
#include <utility>

#include <boost/asio/associated_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <type_traits>
#include <utility>

namespace jitcache::daemon::server {

template <class Executor, class Function, class R = std::invoke_result_t<Function&>>
boost::asio::awaitable<R> run_on(Executor pool, Function fn) {
  return boost::asio::async_initiate<const boost::asio::use_awaitable_t<>, void(R)>(
      [pool](auto handler, Function f) {
        boost::asio::post(pool, [handler = std::move(handler), f = std::move(f)]() mutable {
          R result = f();
          auto home = boost::asio::get_associated_executor(handler);
          boost::asio::dispatch(home, [handler = std::move(handler), result = std::move(result)]() mutable {
            std::move(handler)(std::move(result));
          });
        });
      },
      boost::asio::use_awaitable, std::move(fn));
}

}  // namespace jitcache::daemon::server
