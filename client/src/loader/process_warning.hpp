// The one warning per process that libjitcache may print (docs/client-guide.md "When the daemon is
// down"): the first time the cache cannot be used, one line on stderr says why and how to silence
// it; every later occurrence is only counted. Never stdout, never more than one line, never a
// signal, never into a file the program opened on fd 2 after closing its stderr (stderr_line.hpp).
// Thread safety: safe from any thread.
#pragma once

#include <string_view>

namespace jitcache::client::loader {

// Prints "jitcache: <text> ..." once per process unless `quiet`; returns true when it printed.
bool warn_once(std::string_view text, bool quiet);

}  // namespace jitcache::client::loader
