// How a worker thread runs its io_context: plainly (sleep in epoll_wait whenever there is nothing to
// do), or polling on the CPU for a while after each handler before it sleeps (config busy_poll_us).
//
// Rationale: a client connects and then sends its request a few tens of microseconds later. A worker
// that sleeps between the two is woken twice per connection, and on a virtual machine each wake-up
// of a halted vCPU costs ~0.1-0.3 ms — most of a small cache hit (docs/benchmarks.md). Polling for a
// bounded time after work keeps the thread awake for the request that is about to follow.
// Thread safety: call from the thread that is to run `io`; returns when `io` stops or runs out of work.
#pragma once

#include <chrono>

#include <boost/asio/io_context.hpp>

namespace jitcache::daemon::server {

void run_worker_loop(boost::asio::io_context& io, std::chrono::microseconds busy_poll);

}  // namespace jitcache::daemon::server
