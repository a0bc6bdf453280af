#include <client/src/link/cu_link_calls.hpp>

#include <pthread.h>
#include <exception>

#include <memory>

#include <client/src/link/link_runtime.hpp>
#include <client/src/link/session_registry.hpp>

namespace jitcache::client::link {

namespace {

using Registry = SessionRegistry<CUlinkState, CuLinkSession>;

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

}  // namespace

CUresult cu_link_create(const CuLinkEntryPoints& real, unsigned count, CUjit_option* options, void** values,
                        CUlinkState* state) {
  const CUresult result = real.create(count, options, values, state);
  if (result != CUDA_SUCCESS || state == nullptr || *state == nullptr) return result;
  try {
    // A session replays its inputs at Complete: without the add function of this ABI it cannot.
    if (real.add_data == nullptr || real.complete == nullptr || RuntimeEnvironment::caching_disabled()) return result;
    sessions().add(*state, std::make_shared<CuLinkSession>(real, *state, count, options, values));
  } catch (...) {
    // No session: every later call on this state is the driver's own.
  }
  return result;
}

CUresult cu_link_add_data(const CuLinkEntryPoints& real, CUlinkState state, CUjitInputType type, void* data,
                          std::size_t size, const char* name, unsigned count, CUjit_option* options, void** values) {
  std::shared_ptr<CuLinkSession> session;
  try {
    session = sessions().find(state);
    if (session) return session->add_data(real, type, data, size, name, count, options, values);
  } catch (...) {
    // Out of memory keeping the input: the state becomes the driver's alone, with every input so far.
    if (session) {
      if (const CUresult replayed = session->give_up(real); replayed != CUDA_SUCCESS) return replayed;
    }
  }
  return real.add_data(state, type, data, size, name, count, options, values);
}

CUresult cu_link_add_file(const CuLinkEntryPoints& real, CUlinkState state, CUjitInputType type, const char* path,
                          unsigned count, CUjit_option* options, void** values) {
  std::shared_ptr<CuLinkSession> session;
  try {
    session = sessions().find(state);
    if (session) return session->add_file(real, type, path, count, options, values);
  } catch (...) {
    if (session) {
      if (const CUresult replayed = session->give_up(real); replayed != CUDA_SUCCESS) return replayed;
    }
  }
  return real.add_file(state, type, path, count, options, values);
}

CUresult cu_link_complete(const CuLinkEntryPoints& real, CUlinkState state, void** cubin, std::size_t* size) {
  std::shared_ptr<CuLinkSession> session;
  try {
    session = sessions().find(state);
    if (session) {
      RuntimeEnvironment environment(true);
      return session->complete(real, environment.get(), cubin, size);
    }
  } catch (...) {
    if (session) {
      if (const CUresult replayed = session->give_up(real); replayed != CUDA_SUCCESS) return replayed;
    }
  }
  return real.complete(state, cubin, size);
}

CUresult cu_link_destroy(const CuLinkEntryPoints& real, CUlinkState state) {
  // The session (and a cached image it handed out) goes with the state, whatever the driver says.
  std::shared_ptr<CuLinkSession> session;
  try {
    session = sessions().take(state);
  } catch (...) {
  }
  return real.destroy(state);
}

std::size_t cu_link_sessions_alive() { return sessions().size(); }

}  // namespace jitcache::client::link
