// The ptxas options nvcc stores beside a PTX entry in a fat binary (`-Xptxas -O2 -maxrregcount=32
// -lineinfo` → "-O2  -maxrregcount=32 --generate-line-info "; `-G` → " -g --dont-merge-basicblocks
// --return-at-end "; docs/driver-facts.md §3). The driver applies them when it JITs that PTX, so the cache must
// apply them when it compiles and key on them: they become JIT options added to the caller's.
//
// Only options with an exact CUjit_option equivalent are accepted; anything else makes the load
// uncacheable (ErrorCode::unsupported naming the option), never silently mis-keyed.
// Thread safety: pure function.
#pragma once

#include <cuda.h>

#include <cstdint>
#include <string_view>
#include <vector>

#include <common/result.hpp>

namespace jitcache::client::key {

struct JitOptionValue {
  CUjit_option option;
  std::uintptr_t value;  // an integer option's value, as it travels in the void* slot
};

common::Result<std::vector<JitOptionValue>> parse_embedded_ptxas_options(std::string_view text);

}  // namespace jitcache::client::key
