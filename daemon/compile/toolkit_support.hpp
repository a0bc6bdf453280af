// What a given nvJitLink release can compile: the newest PTX ISA it reads and the archs it targets.
//
// Both are tables keyed by the nvJitLink version (nvJitLinkVersion, reported by the worker), because
// nvJitLink offers no query for either. A version missing from a table is "unknown", and the daemon
// refuses rather than guesses: an entry compiled by a toolkit that misread the PTX would be
// served to every client of its key. Adding a toolkit means adding its rows here, checked
// against the real library: test_daemon_compile_toolkit_support.cpp compares the arch table with
// what the linked nvJitLink accepts.
// Thread safety: pure functions over constant tables.
#pragma once

#include <compare>
#include <optional>
#include <string>
#include <string_view>

namespace jitcache::daemon::compile {

struct ToolkitVersion {
  unsigned major = 0;
  unsigned minor = 0;
  auto operator<=>(const ToolkitVersion&) const = default;
};

// A PTX ISA version, the `.version X.Y` directive.
struct PtxIsa {
  unsigned major = 0;
  unsigned minor = 0;
  auto operator<=>(const PtxIsa&) const = default;
};

std::string to_string(ToolkitVersion version);  // "13.0"
std::string to_string(PtxIsa isa);              // "9.0"
// "nvJitLink 13.0": the producer string stored with each entry the daemon compiles.
std::string producer_name(ToolkitVersion version);

// The newest PTX ISA this nvJitLink compiles; nullopt when the version is not in the table.
std::optional<PtxIsa> max_ptx_isa(ToolkitVersion version);

// Whether this nvJitLink generates code for `arch` ("sm_90", "sm_90a", "sm_100f"); nullopt when the
// version is not in the arch table.
std::optional<bool> can_target(ToolkitVersion version, std::string_view arch);

}  // namespace jitcache::daemon::compile
