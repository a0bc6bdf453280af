#include <daemon/server/worker_loop.hpp>

namespace jitcache::daemon::server {

void run_worker_loop(boost::asio::io_context& io, std::chrono::microseconds busy_poll) {
  using Clock = std::chrono::steady_clock;
  if (busy_poll.count() <= 0) {
    io.run();
    return;
  }
  // run_one() sleeps until a handler is ready; 0 means the context stopped or has no work left.
  while (io.run_one() > 0) {
    auto until = Clock::now() + busy_poll;
    while (Clock::now() < until) {
      if (io.poll() > 0) {
        until = Clock::now() + busy_poll;
      } else if (io.stopped()) {
        return;
      }
    }
  }
}

}  // namespace jitcache::daemon::server
