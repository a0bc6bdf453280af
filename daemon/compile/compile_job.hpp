// One compile as the worker sees it: PTX, the arch and the nvJitLink options. Nothing of the key,
// the client or the store travels to the worker.
// Thread safety: plain value.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace jitcache::daemon::compile {

struct CompileJob {
  std::string arch;                            // "sm_90a": the worker passes -arch=<arch>
  std::vector<std::string> nvjitlink_options;  // besides -arch (option_mapping.hpp)
  std::vector<std::uint8_t> ptx;               // the exact bytes the key's content digest covers
};

}  // namespace jitcache::daemon::compile
