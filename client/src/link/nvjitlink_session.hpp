// One nvJitLink session through the cache (docs/transparent.md "Link sessions"): as a cuLink*
// session (cu_link_session.hpp), for nvJitLinkCreate / AddData / AddFile / Complete and the calls
// that read a finished link.
//
//   create    the real nvJitLinkCreate runs at once with the program's options (its refusals,
//             UNRECOGNIZED_OPTION or MISSING_ARCH, come at once); the options are canonicalised
//             (proto/nvjitlink_options.hpp): an option the table lacks, -ptx, or a library whose
//             version cannot be read makes the session uncacheable
//   add       PTX, cubin, LTO-IR, fat binary, object and library inputs are copied and kept; any
//             other input makes the session uncacheable: the kept ones are replayed, in order
//   complete  the key: "link=nvjitlink;nvjitlink=<keyed options>", arch from -arch=, the library's
//             identity (nvjitlink_identity.hpp) in the driver field. A hit: the cached cubin, owned by
//             the session until nvJitLinkDestroy. A miss: the daemon compiles it when it can
//             (capability bit 9 and the same nvJitLink), else the inputs are replayed into the real
//             handle, the real nvJitLinkComplete runs and its cubin is PUT
//   after     a served session answers GetLinkedCubinSize/GetLinkedCubin from its image, the logs
//             from its own (an info line when the program asked for -verbose or -time, else empty;
//             an empty error log), GetLinkedPtx* as nvJitLink 13.0 does for a link without -ptx
//             (NVJITLINK_ERROR_INVALID_INPUT), and a further Add or Complete as it does after a
//             Complete (NVJITLINK_ERROR_INTERNAL). Every other session forwards them to the real handle.
//
// The deferred add has cuLink*'s price: an input nvJitLink refuses fails at nvJitLinkComplete with
// the result its nvJitLinkAddData gave (NVJITLINK_ERROR_PTX_COMPILE, ...) and the real handle's
// error log, where nvJitLink itself would have failed the add and then "completed" with an empty
// cubin (docs/driver-facts.md §2: check every AddData).
// Thread safety: every method takes the session's mutex.
#pragma once

#include <cstddef>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <client/src/link/link_environment.hpp>
#include <client/src/link/link_input.hpp>
#include <client/src/link/nvjitlink_entry_points.hpp>
#include <client/src/loader/load_record.hpp>
#include <common/result.hpp>
#include <proto/key.hpp>
#include <proto/nvjitlink_options.hpp>

namespace jitcache::client::link {

struct LinkKey;

class NvJitLinkSession {
 public:
  // After a successful real nvJitLinkCreate of `real` with `options`; `library` is the identity of
  // the library the real functions are in (nvjitlink_identity), or why it is not known.
  NvJitLinkSession(nvJitLinkHandle real, std::span<const std::string_view> options,
                   common::Result<proto::DriverId> library);

  nvJitLinkHandle real_handle() const { return m_real; }
  std::string uncacheable_reason() const;
  // After a failure inside the cache (no memory): the kept inputs go to the real handle, and every
  // later call to nvJitLink. The first replay failure, else NVJITLINK_SUCCESS.
  nvJitLinkResult give_up(const NvJitLinkEntryPoints& real);

  nvJitLinkResult add_data(const NvJitLinkEntryPoints& real, nvJitLinkInputType type, const void* data,
                           std::size_t size, const char* name);
  nvJitLinkResult add_file(const NvJitLinkEntryPoints& real, nvJitLinkInputType type, const char* path);
  // Records the outcome (the calling thread's last load info, the counters, and JITCACHE_REPORT's
  // process report under `entry_point`, the name the program called).
  nvJitLinkResult complete(const NvJitLinkEntryPoints& real, const LinkEnvironment& env,
                           std::string_view entry_point = "nvJitLinkComplete");

  nvJitLinkResult linked_cubin_size(const NvJitLinkEntryPoints& real, std::size_t* size);
  nvJitLinkResult linked_cubin(const NvJitLinkEntryPoints& real, void* cubin);
  nvJitLinkResult linked_ptx_size(const NvJitLinkEntryPoints& real, std::size_t* size);
  nvJitLinkResult linked_ptx(const NvJitLinkEntryPoints& real, char* ptx);
  nvJitLinkResult error_log_size(const NvJitLinkEntryPoints& real, std::size_t* size);
  nvJitLinkResult error_log(const NvJitLinkEntryPoints& real, char* log);
  nvJitLinkResult info_log_size(const NvJitLinkEntryPoints& real, std::size_t* size);
  nvJitLinkResult info_log(const NvJitLinkEntryPoints& real, char* log);

 private:
  enum class Mode { keeping, real, served };

  nvJitLinkResult replay(const NvJitLinkEntryPoints& real, const std::string& why);
  nvJitLinkResult complete_keyed(const NvJitLinkEntryPoints& real, const LinkEnvironment& env,
                                 loader::LoadRecord& record);
  // Replays, completes for real, and PUTs the cubin when `key` is set.
  nvJitLinkResult link_for_real(const NvJitLinkEntryPoints& real, const LinkEnvironment& env, const LinkKey* key,
                                loader::LoadRecord& record);
  void serve(std::vector<std::uint8_t> cubin, const std::string& what, loader::LoadRecord& record);
  static nvJitLinkResult copy_log(const std::string& log, char* out);

  mutable std::mutex m_mutex;
  nvJitLinkHandle m_real;
  std::optional<proto::NvJitLinkOptions> m_options;
  std::optional<proto::DriverId> m_library;
  Mode m_mode = Mode::keeping;
  std::string m_uncacheable;
  std::vector<LinkInput> m_inputs;
  std::size_t m_kept_bytes = 0;
  std::vector<std::uint8_t> m_cubin;  // Mode::served
  std::string m_info_log;             // Mode::served
};

}  // namespace jitcache::client::link
