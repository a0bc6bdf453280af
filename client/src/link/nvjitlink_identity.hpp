// Which nvJitLink library a program's session runs on, as its key's driver field names it
// (proto/linker_identity.hpp): the library that holds the real functions, asked for its own
// nvJitLinkVersion (never another copy's: a process may have a wheel's and the toolkit's loaded).
// Thread safety: safe from any thread; the answer for each library is found once and kept.
#pragma once

#include <client/src/link/nvjitlink_entry_points.hpp>
#include <common/result.hpp>
#include <proto/key.hpp>

namespace jitcache::client::link {

// `real_function`: any address inside the library. `lookup`: how to find a symbol in a library
// handle without reaching interposed names (the preload passes libc's real dlsym; tests ::dlsym).
// ErrorCode::unsupported when the library has no nvJitLinkVersion (releases before 12.3) or it fails.
common::Result<proto::DriverId> nvjitlink_identity(const void* real_function,
                                                   void* (*lookup)(void* handle, const char* name));

}  // namespace jitcache::client::link
