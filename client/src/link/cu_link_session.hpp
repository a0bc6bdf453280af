// One cuLink* session through the cache (docs/transparent.md "Link sessions"): what the program
// calls cuLinkCreate, cuLinkAddData/cuLinkAddFile and cuLinkComplete with, kept until Complete, and
// at Complete either the cached image of the whole session or the real link, stored for next time.
//
//   create    the real cuLinkCreate runs at once with the caller's exact arrays (its errors, e.g.
//             CUDA_ERROR_JIT_COMPILER_NOT_FOUND, are the driver's own and come at once); the options
//             are canonicalised: any the key cannot hold makes the session uncacheable
//   add       a keyable input (PTX, cubin, fat binary, object, library; its own options all keyed
//             ones) is copied and kept; nothing reaches the driver yet. Anything else makes the
//             session uncacheable from there on: the kept inputs are replayed into the real state in
//             order, and this call and every later one go to the driver as given
//   complete  the key (link_key.hpp): arch from the current device or CU_JIT_TARGET, the driver's
//             identity, "link=cu;" + the create options. A hit: the cached cubin, checked, owned by
//             the session until cuLinkDestroy, with the caller's log buffers and CU_JIT_WALL_TIME
//             filled (loader::CallerOptions::fill_logs). A miss: the inputs replayed into the real
//             state, the real cuLinkComplete, the image PUT; the caller gets the real state's cubin
//             and the driver's own logs. The daemon down, slow or broken: the same real link, no PUT.
//
// Rationale for deferring the real cuLinkAddData: the driver compiles PTX inside it, which is the
// cost a hit saves. The price: an input the driver would refuse (bad PTX) fails at cuLinkComplete,
// when it is replayed, instead of at its own cuLinkAddData; the CUresult and the driver's log in
// the caller's error buffer are the driver's own. On a hit nothing was refused: the entry exists
// only because these very inputs, with these options, on this driver, linked before.
//
// Every call names the entry points of the ABI the program called (cuLinkCreate or cuLinkCreate_v2,
// ...), and the replay uses the add function of the call that triggers it.
// Thread safety: every method takes the session's mutex (a program may hand a state between
// threads); the real state is used only under it.
#pragma once

#include <cuda.h>

#include <cstddef>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <client/src/link/link_environment.hpp>
#include <client/src/link/link_input.hpp>
#include <client/src/loader/caller_options.hpp>
#include <client/src/loader/load_record.hpp>
#include <proto/jit_options.hpp>

namespace jitcache::client::link {

struct LinkKey;

// The real cuLink* functions of one ABI (plain or _v2 names; cuLinkComplete and cuLinkDestroy have one).
struct CuLinkEntryPoints {
  decltype(&::cuLinkCreate) create = nullptr;
  decltype(&::cuLinkAddData) add_data = nullptr;
  decltype(&::cuLinkAddFile) add_file = nullptr;
  decltype(&::cuLinkComplete) complete = nullptr;
  decltype(&::cuLinkDestroy) destroy = nullptr;
};

class CuLinkSession {
 public:
  // After a successful real cuLinkCreate of `real` with these arrays (kept: the driver writes its
  // outputs into them until cuLinkDestroy, and so does a hit). `family`: the entry points of the ABI
  // the program created it with, whose add function replays the kept inputs at Complete.
  CuLinkSession(const CuLinkEntryPoints& family, CUlinkState real, unsigned count, CUjit_option* options,
                void** values);

  CUlinkState real_state() const { return m_real; }

  CUresult add_data(const CuLinkEntryPoints& real, CUjitInputType type, void* data, std::size_t size, const char* name,
                    unsigned count, CUjit_option* options, void** values);
  CUresult add_file(const CuLinkEntryPoints& real, CUjitInputType type, const char* path, unsigned count,
                    CUjit_option* options, void** values);
  // Records the outcome (the calling thread's last load info, the counters, and JITCACHE_REPORT's
  // process report under `entry_point`). The kept inputs are replayed with the create's family
  // (cuLinkComplete has one ABI).
  CUresult complete(const CuLinkEntryPoints& called, const LinkEnvironment& env, void** cubin, std::size_t* size,
                    std::string_view entry_point = "cuLinkComplete");

  // Why the session is not cached; empty while it may be.
  std::string uncacheable_reason() const;
  // After a failure inside the cache (no memory): the kept inputs go to the real state, and every
  // later call to the driver. The first replay failure's CUresult, else CUDA_SUCCESS.
  CUresult give_up(const CuLinkEntryPoints& real);

 private:
  enum class Mode {
    keeping,  // inputs are kept for the key
    real,     // every call goes to the driver (uncacheable, or linked for real)
    served,   // Complete handed out a cached image
  };

  // Why this input cannot be keyed ("" when it can); fills `kind` and `canonical` when it can.
  std::string keyability(CUjitInputType type, const void* data, std::size_t size, unsigned count, CUjit_option* options,
                         void** values, proto::LinkInputKind& kind, std::string& canonical) const;
  // Keeps an input that keyability() accepted.
  void keep(LinkInput input, unsigned count, CUjit_option* options, void** values);
  // Stops keeping: replays the kept inputs into the real state, in order; the first failure's
  // CUresult (the session's inputs are then the driver's business), else CUDA_SUCCESS.
  CUresult replay(const CuLinkEntryPoints& real, const std::string& why);

  CUresult complete_keyed(const CuLinkEntryPoints& real, const LinkEnvironment& env, void** cubin, std::size_t* size,
                          loader::LoadRecord& record);
  common::Result<LinkKey> key(const LinkEnvironment& env) const;
  // The real link of every input (replayed) and the real cuLinkComplete; `store`: PUT the image.
  CUresult link_for_real(const CuLinkEntryPoints& real, const LinkEnvironment& env, const LinkKey* key, void** cubin,
                         std::size_t* size, loader::LoadRecord& record);
  CUresult serve(const transport::FetchedImage& fetched, bool published, void** cubin, std::size_t* size,
                 loader::LoadRecord& record);

  mutable std::mutex m_mutex;
  CuLinkEntryPoints m_family;
  CUlinkState m_real;
  loader::CallerOptions m_caller;
  std::optional<proto::CanonicalOptions> m_create_options;
  Mode m_mode = Mode::keeping;
  std::string m_uncacheable;  // why (Mode::real before Complete)
  std::vector<LinkInput> m_inputs;
  std::size_t m_kept_bytes = 0;
  std::vector<std::uint8_t> m_cubin;  // Mode::served: the image handed out
};

}  // namespace jitcache::client::link
