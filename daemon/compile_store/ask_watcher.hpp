// AskWatcher: told the arch and driver of every key a client asks for (LOOKUP by key or fast key,
// COMPILE), found or not, so that something can notice a driver build or an arch the store has not
// seen before (the re-JIT: daemon/rejit/). Called on the request's own thread, before the store is
// asked: an implementation must return at once (a set lookup; anything more goes to its own thread).
// `asker` is the caller's uid, or nullopt for a trusted caller (daemon/policy/trust_policy.hpp),
// so that what one untrusted uid can set off is bounded on its own.
// Thread safety: asked() is called from many threads at once.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace jitcache::daemon::compile_store {

class AskWatcher {
 public:
  virtual ~AskWatcher() = default;
  virtual void asked(const std::string& arch, std::uint32_t driver_api, const std::string& driver_build,
                     std::optional<std::uint32_t> asker) = 0;
};

}  // namespace jitcache::daemon::compile_store
