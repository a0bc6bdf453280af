// The two PTX directives the driver looks at before it JITs: `.version` (the PTX ISA) and `.target`
// (the SM the PTX was written for, with its `a`/`f` suffix).
//
// Text without a `.version` directive is not PTX at all: the driver answered "hello world" with
// CUDA_ERROR_INVALID_IMAGE (docs/driver-facts.md §4), not with a compile error.
// Thread safety: pure functions.
#pragma once

#include <client/src/fatbin/fatbin_entry.hpp>

#include <optional>
#include <string_view>

namespace jitcache::fakes::fake_cuda {

namespace fb = jitcache::client::fatbin;

struct PtxHeader {
  unsigned version_major = 0;
  unsigned version_minor = 0;
  std::optional<fb::Arch> target;  // the first sm_XY in `.target`; absent when there is none
  unsigned version_line = 0;       // 1-based, for ptxas-style messages
};

// Skips // and /* */ comments; nullopt when no well-formed `.version X.Y` precedes the code.
std::optional<PtxHeader> read_ptx_header(std::string_view text);

}  // namespace jitcache::fakes::fake_cuda
