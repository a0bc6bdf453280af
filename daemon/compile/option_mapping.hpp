// The canonical option string of a key (proto/jit_options.hpp, docs/cache-key.md) → the nvJitLink
// options that make nvJitLink generate what the driver's JIT would for those options, or a refusal
// naming the first option that has no faithful equivalent. The table with the reason for every
// choice is in docs/compile-service.md.
// Thread safety: pure function.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <common/result.hpp>

#include <daemon/compile/refusal.hpp>

namespace jitcache::daemon::compile {

struct MappedOptions {
  // nvJitLink options besides -arch= (the job carries the arch), in canonical-key order.
  std::vector<std::string> nvjitlink_options;
  std::optional<Refusal> refusal;  // set: do not compile; nvjitlink_options is then empty
};

// `canonical` must be a canonical option string (canonicalize_option_text(s) == s); anything else
// is ErrorCode::invalid_argument, because the daemon validated the key before it got here.
common::Result<MappedOptions> map_options(std::string_view canonical);

}  // namespace jitcache::daemon::compile
