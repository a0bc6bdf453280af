// The environment `jitcache run` hands the program: LD_PRELOAD with libjitcache-preload.so first.
// Thread safety: pure functions.
#pragma once

#include <string>
#include <string_view>

namespace jitcache::client::cli {

// `current` (LD_PRELOAD as it is; entries separated by colons or spaces, as the dynamic loader
// reads them) with `library` in front, every other entry kept in its order, and any entry that
// names `library` (the same text, or the same file by another path) dropped, so the library is
// preloaded once however often `jitcache run` is nested. Empty entries are dropped.
std::string with_preload(std::string_view current, const std::string& library);

}  // namespace jitcache::client::cli
