// Reads the PTX ISA version (`.version X.Y`) that a PTX module declares, so the daemon can refuse a
// module newer than its nvJitLink before it spends a worker on it.
// Thread safety: pure function.
#pragma once

#include <optional>
#include <string_view>

#include <daemon/compile/toolkit_support.hpp>

namespace jitcache::daemon::compile {

// The PTX ISA of `.version`, which the PTX spec requires as the module's first directive (after
// comments and white space). nullopt when the module does not start that way: such input is not
// PTX the driver would read either, and nvJitLink reports why in its log (a compile error).
std::optional<PtxIsa> read_ptx_isa(std::string_view ptx);

}  // namespace jitcache::daemon::compile
