// A refusal: the daemon cannot compile this request faithfully, so the client builds it itself with
// its own driver and PUTs the result (docs/compile-service.md "Refusals"). It is an outcome, not an
// error: nothing is wrong with the request, only the daemon's nvJitLink would not produce what the
// driver would.
// Thread safety: plain values.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace jitcache::daemon::compile {

// Why the daemon refused. Persisted in counters and logs by name; never renumber.
enum class RefusalReason : std::uint8_t {
  option = 0,           // an option has no faithful nvJitLink equivalent
  ptx_version = 1,      // the PTX ISA is newer than the nvJitLink in use knows
  arch = 2,             // the nvJitLink in use cannot generate code for the arch
  driver_too_old = 3,   // the client's driver is older than the toolkit major the daemon compiles with
  unknown_toolkit = 4,  // the nvJitLink version is not in the daemon's tables, so nothing can be checked
  linker = 5,           // a link the daemon's nvJitLink would not produce byte for byte (another
                        // nvJitLink, or a cuLink* session, which the driver links)
  nvrtc = 6,            // NVRTC failed for a reason other than the source (out of memory, internal),
                        // or its library is not the one the daemon probed
};

struct Refusal {
  RefusalReason reason = RefusalReason::option;
  std::string message;  // names the option, version or arch and says why
};

std::string_view refusal_reason_name(RefusalReason reason);

}  // namespace jitcache::daemon::compile
