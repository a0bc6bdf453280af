// How long a daemon that failed a call is left alone, for loads (daemon_link.hpp) and hit notes
// (pending_hit_notes.hpp) alike.
// Rationale: a refused connection costs microseconds, so retrying after a second is cheap and finds
// a restarted daemon quickly; a timeout costs a full wait, so a hung daemon is left alone for 30
// seconds, and so are replies that cannot be read (a daemon that is broken rather than absent).
// Thread safety: a pure function.
#pragma once

#include <chrono>

#include <common/result.hpp>

namespace jitcache::client::loader {

inline constexpr std::chrono::seconds k_refused_back_off{1};
inline constexpr std::chrono::seconds k_broken_back_off{30};

inline std::chrono::seconds back_off_for(const common::Error& why) {
  using common::ErrorCode;
  const bool slow_or_broken = why.code == ErrorCode::timeout || why.code == ErrorCode::corrupt ||
                              why.code == ErrorCode::invalid_argument || why.code == ErrorCode::too_large;
  return slow_or_broken ? k_broken_back_off : k_refused_back_off;
}

}  // namespace jitcache::client::loader
