// The end of a server's log, quoted in an error message: the logs live in temporary directories that
// are gone by the time someone reads the message. Thread safety: free function.
#pragma once

#include <cstddef>
#include <string>

namespace jitcache::bench {

// The last `max_bytes` of the file (from a line start where one is near), or a note that it could
// not be read.
std::string log_tail(const std::string& path, std::size_t max_bytes = 2000);

}  // namespace jitcache::bench
