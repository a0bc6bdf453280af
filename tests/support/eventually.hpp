// Waits for what a test expects another process or thread to do soon (a daemon's publisher, an
// upload, a spare worker): polls `condition` until it holds or `limit` has passed, and checks it
// once more at the end. Returns whether it held. The limit only bounds how long a failing test
// waits; a passing one returns as soon as the condition holds.
// Thread safety: a free function; `condition` runs on the calling thread.
#pragma once

#include <chrono>
#include <functional>
#include <thread>

namespace jitcache::testing {

inline bool eventually(const std::function<bool()>& condition,
                       std::chrono::milliseconds limit = std::chrono::seconds(20),
                       std::chrono::milliseconds poll = std::chrono::milliseconds(5)) {
  const auto until = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < until) {
    if (condition()) return true;
    std::this_thread::sleep_for(poll);
  }
  return condition();
}

}  // namespace jitcache::testing
