// One compile as the worker sees it: PTX (or a link's inputs), the arch and the nvJitLink options;
// or an NVRTC program with the NVRTC the administrator configured. Nothing of the key, the client
// or the store travels to the worker.
// Thread safety: plain value.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <proto/link_content.hpp>
#include <proto/nvrtc_compile_messages.hpp>
#include <proto/nvrtc_key.hpp>

namespace jitcache::daemon::compile {

// One input of a link job, as the program gave it to its nvJitLink (proto/link_content.hpp).
struct LinkJobInput {
  proto::LinkInputKind kind = proto::LinkInputKind::ptx;
  std::vector<std::uint8_t> data;
};

// An NVRTC compile (NVRTC_COMPILE): the library the configuration names, the identity the worker's
// probe reported for it (the worker refuses to compile when the file has changed since), and the
// program as the caller's NVRTC received it.
struct NvrtcJob {
  std::string library;
  proto::NvrtcIdentity identity;
  proto::NvrtcProgramText program;
};

struct CompileJob {
  std::string arch;                            // "sm_90a": the worker passes -arch=<arch>
  std::vector<std::string> nvjitlink_options;  // besides -arch (option_mapping.hpp, or a link's own)
  std::vector<std::uint8_t> ptx;               // the exact bytes the key's content digest covers
  std::vector<LinkJobInput> link_inputs;       // a link (ptx empty): every input, in order
  std::optional<NvrtcJob> nvrtc;               // an NVRTC compile (ptx and link_inputs empty)

  // What the job holds of the client's source, charged to its tenant (compile_bytes_per_uid).
  std::uint64_t source_bytes() const {
    std::uint64_t bytes = ptx.size();
    for (const LinkJobInput& input : link_inputs) bytes += input.data.size();
    if (nvrtc) bytes += nvrtc->program.bytes();
    return bytes;
  }
};

}  // namespace jitcache::daemon::compile
