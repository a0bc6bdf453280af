// The two PTX directives the load walk needs before it JITs: `.version` (can this driver JIT it?)
// and `.target` (sm_90a / sm_100f select an arch-specific or family variant, which the key's arch
// must follow: docs/driver-facts.md §8). Only the module header is scanned, past comments and blank lines.
// Thread safety: pure functions.
#pragma once

#include <optional>
#include <string_view>

#include <client/src/fatbin/fatbin_entry.hpp>

namespace jitcache::client::key {

struct PtxHeader {
  std::optional<unsigned> version_major;
  std::optional<unsigned> version_minor;
  std::optional<fatbin::Arch> target;  // the first sm_XY[a|f] of `.target`
};

PtxHeader read_ptx_header(std::string_view ptx);

// "sm_90", "sm_90a", "sm_100f" → Arch; nullopt for anything else.
std::optional<fatbin::Arch> parse_sm_arch(std::string_view word);

}  // namespace jitcache::client::key
