// The daemon's file descriptor limit (docs/operations.md "File descriptors"): raised at start
// from the soft limit to the hard one, and the plan of how the daemon spends it
// (server/descriptor_plan.hpp), both logged.
// Rationale: a soft limit of 1 024 is what most shells and systemd hand a service by default, while
// the hard limit is usually far higher (systemd: 524 288); the soft one is a guard for programs
// that use select(), which the daemon does not (Asio uses epoll). Raising it needs no privilege.
// Thread safety: call from the main thread at start-up, before any other thread opens files.
#pragma once

#include <cstdint>

#include <daemon/config/config.hpp>
#include <daemon/server/descriptor_plan.hpp>

namespace jitcache::daemon::startup {

// Returns the soft limit the daemon now runs under (logs what it was and why it could not be
// raised, if so).
std::uint64_t raise_descriptor_limit();

// The plan for `limit`, counted from the descriptors open now (call it after the store and the
// compile path are made, before the server); a max_connections the limit cannot hold is lowered
// in the plan, with a warning that says what to raise. `compile_jobs`: compiles at once.
server::DescriptorPlan plan_descriptors_at_start(const config::Config& config, unsigned compile_jobs,
                                                 std::uint64_t limit);

}  // namespace jitcache::daemon::startup
