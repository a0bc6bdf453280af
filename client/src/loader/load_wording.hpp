// How the load flow words what happened: excerpts of compiler logs for the one-line reason, and the
// public load stage of a CUresult. Shared by load_flow.cpp, load_flow_hit.cpp and load_flow_miss.cpp.
// Thread safety: pure functions.
#pragma once

#include <cuda.h>

#include <cstddef>
#include <string>
#include <string_view>

#include <jitcache/jitcache.h>

#include <client/src/driver/load_error_class.hpp>

namespace jitcache::client::loader {

// Rationale: a compiler log beyond this adds nothing to a one-line reason; the caller's own error
// log buffer receives the whole log from the driver.
inline constexpr std::size_t k_log_excerpt = 600;

inline std::string excerpt(std::string_view log) {
  while (!log.empty() && (log.back() == '\n' || log.back() == '\0')) log.remove_suffix(1);
  if (log.size() > k_log_excerpt) return std::string(log.substr(0, k_log_excerpt)) + "…";
  return std::string(log);
}

inline jitcache_load_stage stage_for(CUresult result) {
  return static_cast<jitcache_load_stage>(driver::stage_of(result));
}

}  // namespace jitcache::client::loader
