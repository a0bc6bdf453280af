// The nvJitLink calls as libjitcache-preload.so's wrappers make them
// (client/src/preload/nvjitlink_hooks.cpp): the real functions of the release family the program
// called, the program's arguments, and the process's session of the handle (nvjitlink_session.hpp).
// A handle without a session (caching disabled, a failed create) gets the real call, unchanged.
// Nothing here throws: a failure inside the cache ends in the real call.
// Thread safety: safe from any thread.
#pragma once

#include <cstddef>
#include <cstdint>

#include <client/src/link/nvjitlink_entry_points.hpp>

namespace jitcache::client::link {

// `lookup` finds a symbol in a library handle without reaching interposed names (the preload's real
// dlsym), for the library's own nvJitLinkVersion (nvjitlink_identity.hpp).
nvJitLinkResult nvjitlink_create(const NvJitLinkEntryPoints& real, void* (*lookup)(void*, const char*),
                                 nvJitLinkHandle* handle, std::uint32_t count, const char* const* options);
nvJitLinkResult nvjitlink_destroy(const NvJitLinkEntryPoints& real, nvJitLinkHandle* handle);
nvJitLinkResult nvjitlink_add_data(const NvJitLinkEntryPoints& real, nvJitLinkHandle handle, nvJitLinkInputType type,
                                   const void* data, std::size_t size, const char* name);
nvJitLinkResult nvjitlink_add_file(const NvJitLinkEntryPoints& real, nvJitLinkHandle handle, nvJitLinkInputType type,
                                   const char* path);
// `entry_point`: the name the program called ("nvJitLinkComplete", "__nvJitLinkComplete_13_0"), for
// JITCACHE_REPORT.
nvJitLinkResult nvjitlink_complete(const NvJitLinkEntryPoints& real, nvJitLinkHandle handle,
                                   const char* entry_point = "nvJitLinkComplete");
nvJitLinkResult nvjitlink_linked_cubin_size(const NvJitLinkEntryPoints& real, nvJitLinkHandle handle,
                                            std::size_t* size);
nvJitLinkResult nvjitlink_linked_cubin(const NvJitLinkEntryPoints& real, nvJitLinkHandle handle, void* cubin);
nvJitLinkResult nvjitlink_linked_ptx_size(const NvJitLinkEntryPoints& real, nvJitLinkHandle handle, std::size_t* size);
nvJitLinkResult nvjitlink_linked_ptx(const NvJitLinkEntryPoints& real, nvJitLinkHandle handle, char* ptx);
nvJitLinkResult nvjitlink_error_log_size(const NvJitLinkEntryPoints& real, nvJitLinkHandle handle, std::size_t* size);
nvJitLinkResult nvjitlink_error_log(const NvJitLinkEntryPoints& real, nvJitLinkHandle handle, char* log);
nvJitLinkResult nvjitlink_info_log_size(const NvJitLinkEntryPoints& real, nvJitLinkHandle handle, std::size_t* size);
nvJitLinkResult nvjitlink_info_log(const NvJitLinkEntryPoints& real, nvJitLinkHandle handle, char* log);

std::size_t nvjitlink_sessions_alive();

}  // namespace jitcache::client::link
