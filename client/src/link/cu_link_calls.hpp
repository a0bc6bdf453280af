// The cuLink* calls as libjitcache-preload.so's wrappers make them (client/src/preload/link_hooks.cpp):
// each takes the real entry points of the ABI the program called and the program's arguments, and
// runs the call through the process's session of that state (cu_link_session.hpp), with
// libjitcache's runtime (its configuration, daemon connections, driver and counters). A state
// without a session (caching disabled, a failed create, one made before the preload saw it) gets the
// real call, unchanged. Nothing here throws: a failure inside the cache ends in the real call.
// Thread safety: safe from any thread.
#pragma once

#include <cuda.h>

#include <cstddef>

#include <client/src/link/cu_link_session.hpp>

namespace jitcache::client::link {

CUresult cu_link_create(const CuLinkEntryPoints& real, unsigned count, CUjit_option* options, void** values,
                        CUlinkState* state);
CUresult cu_link_add_data(const CuLinkEntryPoints& real, CUlinkState state, CUjitInputType type, void* data,
                          std::size_t size, const char* name, unsigned count, CUjit_option* options, void** values);
CUresult cu_link_add_file(const CuLinkEntryPoints& real, CUlinkState state, CUjitInputType type, const char* path,
                          unsigned count, CUjit_option* options, void** values);
CUresult cu_link_complete(const CuLinkEntryPoints& real, CUlinkState state, void** cubin, std::size_t* size);
CUresult cu_link_destroy(const CuLinkEntryPoints& real, CUlinkState state);

// Sessions alive now (for tests).
std::size_t cu_link_sessions_alive();

}  // namespace jitcache::client::link
