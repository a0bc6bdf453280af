// One compile as the worker sees it: PTX (or a link's inputs), the arch and the nvJitLink options.
// Nothing of the key, the client or the store travels to the worker.
// Thread safety: plain value.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <proto/link_content.hpp>

namespace jitcache::daemon::compile {

// One input of a link job, as the program gave it to its nvJitLink (proto/link_content.hpp).
struct LinkJobInput {
  proto::LinkInputKind kind = proto::LinkInputKind::ptx;
  std::vector<std::uint8_t> data;
};

struct CompileJob {
  std::string arch;                            // "sm_90a": the worker passes -arch=<arch>
  std::vector<std::string> nvjitlink_options;  // besides -arch (option_mapping.hpp, or a link's own)
  std::vector<std::uint8_t> ptx;               // the exact bytes the key's content digest covers
  std::vector<LinkJobInput> link_inputs;       // a link (ptx empty): every input, in order

  // What the job holds of the client's source, charged to its tenant (compile_bytes_per_uid).
  std::uint64_t source_bytes() const {
    std::uint64_t bytes = ptx.size();
    for (const LinkJobInput& input : link_inputs) bytes += input.data.size();
    return bytes;
  }
};

}  // namespace jitcache::daemon::compile
