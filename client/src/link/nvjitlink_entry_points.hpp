// The nvJitLink functions a session calls, as one release's library has them (the unversioned
// names, or __nvJitLink*_12_4, __nvJitLink*_13_0, ...: nvJitLink.h maps each name to the versioned
// symbol of the release it came with). A session calls only the functions of the family the program
// called, so it never mixes releases. nvJitLink.h is included for its types only
// (NVJITLINK_NO_INLINE): its inline wrappers would bind the names of one release.
// Thread safety: plain values.
#pragma once

#define NVJITLINK_NO_INLINE
#include <nvJitLink.h>
#undef NVJITLINK_NO_INLINE

#include <cstddef>
#include <cstdint>

namespace jitcache::client::link {

struct NvJitLinkEntryPoints {
  nvJitLinkResult (*create)(nvJitLinkHandle*, std::uint32_t, const char* const*) = nullptr;
  nvJitLinkResult (*destroy)(nvJitLinkHandle*) = nullptr;
  nvJitLinkResult (*add_data)(nvJitLinkHandle, nvJitLinkInputType, const void*, std::size_t, const char*) = nullptr;
  nvJitLinkResult (*add_file)(nvJitLinkHandle, nvJitLinkInputType, const char*) = nullptr;
  nvJitLinkResult (*complete)(nvJitLinkHandle) = nullptr;
  nvJitLinkResult (*get_linked_cubin_size)(nvJitLinkHandle, std::size_t*) = nullptr;
  nvJitLinkResult (*get_linked_cubin)(nvJitLinkHandle, void*) = nullptr;
  nvJitLinkResult (*get_linked_ptx_size)(nvJitLinkHandle, std::size_t*) = nullptr;
  nvJitLinkResult (*get_linked_ptx)(nvJitLinkHandle, char*) = nullptr;
  nvJitLinkResult (*get_error_log_size)(nvJitLinkHandle, std::size_t*) = nullptr;
  nvJitLinkResult (*get_error_log)(nvJitLinkHandle, char*) = nullptr;
  nvJitLinkResult (*get_info_log_size)(nvJitLinkHandle, std::size_t*) = nullptr;
  nvJitLinkResult (*get_info_log)(nvJitLinkHandle, char*) = nullptr;
};

using NvJitLinkVersionFunction = nvJitLinkResult (*)(unsigned*, unsigned*);

}  // namespace jitcache::client::link
