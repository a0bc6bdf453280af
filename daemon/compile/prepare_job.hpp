// The refusal checks and the option mapping in one step: a compile request becomes either a job
// for a worker or a refusal ("cannot compile faithfully, build it yourself"). Cheap and run before
// any worker is spawned or any queue slot taken.
// Thread safety: pure function.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <variant>

#include <common/result.hpp>
#include <proto/compile_messages.hpp>
#include <proto/key.hpp>

#include <daemon/compile/compile_job.hpp>
#include <daemon/compile/refusal.hpp>
#include <daemon/compile/toolkit_support.hpp>

namespace jitcache::daemon::compile {

struct CompileInput {
  std::string arch;              // the key's arch
  std::uint32_t driver_api = 0;  // the key's driver API version (cuDriverGetVersion: 13000 = 13.0)
  std::string options;           // the key's canonical option string
  std::span<const std::uint8_t> ptx;
  std::span<const proto::CompileLinkInput> link_inputs = {};  // a link's inputs (ptx then empty)
  std::string driver_build = {};    // the key's driver build (a link's: its nvJitLink, proto/linker_identity.hpp)
  const NvrtcJob* nvrtc = nullptr;  // an NVRTC compile: the job as it is (the op checked it)

  std::uint64_t source_bytes() const {
    std::uint64_t bytes = ptx.size();
    for (const proto::CompileLinkInput& input : link_inputs) bytes += input.data.size();
    if (nvrtc != nullptr) bytes += nvrtc->program.bytes();
    return bytes;
  }
};

using PreparedJob = std::variant<CompileJob, Refusal>;

// A module's compile refuses, in this order: an nvJitLink version the tables do not know; a driver
// whose major is older than the toolkit's (a cubin of toolkit major N needs a driver of major N or
// later); a PTX `.version` newer than the toolkit reads; an arch the toolkit cannot target; an option
// without a faithful nvJitLink equivalent. A link's compile (input.link_inputs) refuses anything but an
// nvJitLink session run on this very nvJitLink (`linker`, what the worker reports: same version, same
// library build) and an arch the toolkit cannot target; its options are nvJitLink's own and go to the
// worker as they are. An NVRTC compile (input.nvrtc) is never refused here: NVRTC_COMPILE decided
// its eligibility (proto/nvrtc_daemon_eligibility.hpp). A non-canonical option string is
// ErrorCode::invalid_argument.
common::Result<PreparedJob> prepare_job(const CompileInput& input, ToolkitVersion toolkit,
                                        const std::optional<proto::DriverId>& linker = std::nullopt);

}  // namespace jitcache::daemon::compile
