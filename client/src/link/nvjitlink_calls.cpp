#include <client/src/link/nvjitlink_calls.hpp>

#include <pthread.h>

#include <memory>
#include <string_view>
#include <vector>

#include <client/src/link/link_runtime.hpp>
#include <client/src/link/nvjitlink_identity.hpp>
#include <client/src/link/nvjitlink_session.hpp>
#include <client/src/link/session_registry.hpp>

namespace jitcache::client::link {

namespace {

using Registry = SessionRegistry<nvJitLinkHandle, NvJitLinkSession>;

// Never destroyed: a link on another thread may outlive static destruction at exit.
Registry& sessions() {
  static Registry* registry = [] {
    auto* made = new Registry();
    ::pthread_atfork([] { sessions().lock_for_fork(); }, [] { sessions().unlock_after_fork(); },
                     [] { sessions().unlock_after_fork(); });
    return made;
  }();
  return *registry;
}

// Runs `call` on the handle's session, or `fallback` (the real function) when it has none or the
// cache failed; a session the cache failed in hands its inputs to the real handle first.
template <class Call, class Fallback>
nvJitLinkResult with_session(const NvJitLinkEntryPoints& real, nvJitLinkHandle handle, Call call, Fallback fallback) {
  std::shared_ptr<NvJitLinkSession> session;
  try {
    session = sessions().find(handle);
    if (session) return call(*session);
  } catch (...) {
    if (session) {
      if (const nvJitLinkResult replayed = session->give_up(real); replayed != NVJITLINK_SUCCESS) return replayed;
    }
  }
  return fallback();
}

bool complete_family(const NvJitLinkEntryPoints& real) {
  return real.destroy != nullptr && real.add_data != nullptr && real.add_file != nullptr && real.complete != nullptr &&
         real.get_linked_cubin_size != nullptr && real.get_linked_cubin != nullptr &&
         real.get_linked_ptx_size != nullptr && real.get_linked_ptx != nullptr && real.get_error_log_size != nullptr &&
         real.get_error_log != nullptr && real.get_info_log_size != nullptr && real.get_info_log != nullptr;
}

}  // namespace

nvJitLinkResult nvjitlink_create(const NvJitLinkEntryPoints& real, void* (*lookup)(void*, const char*),
                                 nvJitLinkHandle* handle, std::uint32_t count, const char* const* options) {
  const nvJitLinkResult result = real.create(handle, count, options);
  if (result != NVJITLINK_SUCCESS || handle == nullptr || *handle == nullptr) return result;
  try {
    // A session answers every later call itself or through the real family: it needs all of it.
    if (!complete_family(real) || RuntimeEnvironment::caching_disabled()) return result;
    std::vector<std::string_view> given;
    if (options != nullptr) {
      for (std::uint32_t i = 0; i < count; ++i) given.emplace_back(options[i] != nullptr ? options[i] : "");
    } else if (count > 0) {
      given.emplace_back("");  // a null array with a count: uncacheable (an empty option is refused)
    }
    auto library = nvjitlink_identity(reinterpret_cast<const void*>(real.create), lookup);
    sessions().add(*handle, std::make_shared<NvJitLinkSession>(*handle, given, std::move(library)));
  } catch (...) {
    // No session: the handle is nvJitLink's own from here on.
  }
  return result;
}

nvJitLinkResult nvjitlink_destroy(const NvJitLinkEntryPoints& real, nvJitLinkHandle* handle) {
  std::shared_ptr<NvJitLinkSession> session;
  try {
    if (handle != nullptr) session = sessions().take(*handle);
  } catch (...) {
  }
  return real.destroy(handle);
}

nvJitLinkResult nvjitlink_add_data(const NvJitLinkEntryPoints& real, nvJitLinkHandle handle, nvJitLinkInputType type,
                                   const void* data, std::size_t size, const char* name) {
  return with_session(
      real, handle, [&](NvJitLinkSession& s) { return s.add_data(real, type, data, size, name); },
      [&] { return real.add_data(handle, type, data, size, name); });
}

nvJitLinkResult nvjitlink_add_file(const NvJitLinkEntryPoints& real, nvJitLinkHandle handle, nvJitLinkInputType type,
                                   const char* path) {
  return with_session(
      real, handle, [&](NvJitLinkSession& s) { return s.add_file(real, type, path); },
      [&] { return real.add_file(handle, type, path); });
}

nvJitLinkResult nvjitlink_complete(const NvJitLinkEntryPoints& real, nvJitLinkHandle handle, const char* entry_point) {
  return with_session(
      real, handle,
      [&](NvJitLinkSession& s) {
        RuntimeEnvironment environment(false);
        return s.complete(real, environment.get(), entry_point);
      },
      [&] { return real.complete(handle); });
}

nvJitLinkResult nvjitlink_linked_cubin_size(const NvJitLinkEntryPoints& real, nvJitLinkHandle handle,
                                            std::size_t* size) {
  return with_session(
      real, handle, [&](NvJitLinkSession& s) { return s.linked_cubin_size(real, size); },
      [&] { return real.get_linked_cubin_size(handle, size); });
}

nvJitLinkResult nvjitlink_linked_cubin(const NvJitLinkEntryPoints& real, nvJitLinkHandle handle, void* cubin) {
  return with_session(
      real, handle, [&](NvJitLinkSession& s) { return s.linked_cubin(real, cubin); },
      [&] { return real.get_linked_cubin(handle, cubin); });
}

nvJitLinkResult nvjitlink_linked_ptx_size(const NvJitLinkEntryPoints& real, nvJitLinkHandle handle, std::size_t* size) {
  return with_session(
      real, handle, [&](NvJitLinkSession& s) { return s.linked_ptx_size(real, size); },
      [&] { return real.get_linked_ptx_size(handle, size); });
}

nvJitLinkResult nvjitlink_linked_ptx(const NvJitLinkEntryPoints& real, nvJitLinkHandle handle, char* ptx) {
  return with_session(
      real, handle, [&](NvJitLinkSession& s) { return s.linked_ptx(real, ptx); },
      [&] { return real.get_linked_ptx(handle, ptx); });
}

nvJitLinkResult nvjitlink_error_log_size(const NvJitLinkEntryPoints& real, nvJitLinkHandle handle, std::size_t* size) {
  return with_session(
      real, handle, [&](NvJitLinkSession& s) { return s.error_log_size(real, size); },
      [&] { return real.get_error_log_size(handle, size); });
}

nvJitLinkResult nvjitlink_error_log(const NvJitLinkEntryPoints& real, nvJitLinkHandle handle, char* log) {
  return with_session(
      real, handle, [&](NvJitLinkSession& s) { return s.error_log(real, log); },
      [&] { return real.get_error_log(handle, log); });
}

nvJitLinkResult nvjitlink_info_log_size(const NvJitLinkEntryPoints& real, nvJitLinkHandle handle, std::size_t* size) {
  return with_session(
      real, handle, [&](NvJitLinkSession& s) { return s.info_log_size(real, size); },
      [&] { return real.get_info_log_size(handle, size); });
}

nvJitLinkResult nvjitlink_info_log(const NvJitLinkEntryPoints& real, nvJitLinkHandle handle, char* log) {
  return with_session(
      real, handle, [&](NvJitLinkSession& s) { return s.info_log(real, log); },
      [&] { return real.get_info_log(handle, log); });
}

std::size_t nvjitlink_sessions_alive() { return sessions().size(); }

}  // namespace jitcache::client::link
