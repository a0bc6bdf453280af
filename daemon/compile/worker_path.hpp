// Where jitcached finds its compile worker when its configuration names none.
// Thread safety: reads /proc/self/exe; safe to call from any thread.
#pragma once

#include <string>

namespace jitcache::daemon::compile {

// `jitcache-compile` beside the running executable when it is there (the build tree: both are built
// into build/daemon/), otherwise the installed <libexecdir>/jitcache/jitcache-compile.
std::string default_worker_path();

}  // namespace jitcache::daemon::compile
