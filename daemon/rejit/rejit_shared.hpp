// The state Rejit's thread shares with asked() and with the compile service's completion handlers
// (rejit.hpp): the event queue, the completions of a batch's compiles, and the stop flag, under one
// mutex with one condition variable. Held by shared_ptr, so a handler that runs late is harmless.
// Thread safety: every member under `mutex`.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <mutex>

#include <daemon/compile/compile_outcome.hpp>
#include <daemon/rejit/ask_tracker.hpp>
#include <daemon/rejit/rejit.hpp>

namespace jitcache::daemon::rejit {

struct Rejit::Shared {
  struct Completion {
    std::uint64_t batch = 0;  // which batch started the compile: a late one of an earlier batch is dropped
    std::size_t slot = 0;     // the compile's index within its batch
    compile::CompileOutcomePtr outcome;
  };

  std::mutex mutex;
  std::condition_variable wake;
  std::deque<Sighting> events;
  std::deque<Completion> completions;
  std::uint64_t batch = 0;
  bool stopping = false;
  // Events are being dropped (the queue was full): warned once until the queue empties again.
  bool dropping = false;
};

}  // namespace jitcache::daemon::rejit
