// Where `jitcache run` finds libjitcache-preload.so (docs/cli.md "run"), in order:
//   1. $JITCACHE_PRELOAD_LIBRARY, when set: that file and no other (a wrong setting is an error,
//      not a reason to load another copy);
//   2. the installed library, found from the running program's directory:
//      <prefix>/<libexecdir>/jitcache/jitcache-cli -> <prefix>/<libdir>/libjitcache-preload.so (the
//      relative path is fixed at build time, JITCACHE_PRELOAD_FROM_EXEDIR);
//   3. in a build tree, the library that tree built (JITCACHE_PRELOAD_BUILD_PATH), used only by the
//      jitcache of that same build tree, so an installed jitcache never loads a developer's copy.
// The front (client/front/front_preload.h) runs the same lookup from <prefix>/bin/jitcache and
// reaches the same file; it hands every failure to this one, which names what it tried.
// A candidate must be a regular file the user can read, and its absolute path must not hold a
// space or a colon: LD_PRELOAD separates its entries with both.
// Thread safety: free functions over the file system and the environment.
#pragma once

#include <string>

#include <common/result.hpp>

namespace jitcache::client::cli {

// The library's absolute path, or an error naming every path tried and why each was refused.
common::Result<std::string> find_preload_library();

}  // namespace jitcache::client::cli
