// The kernels a PTX module defines, read from its text, so that a test or benchmark can ask the
// loaded module for every one of them. Thread safety: pure function.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace jitcache::testing {

// The names after `.entry` (`.visible .entry NAME(`, `.weak .entry NAME(`), sorted and unique.
std::vector<std::string> ptx_entry_names(std::string_view ptx);

}  // namespace jitcache::testing
