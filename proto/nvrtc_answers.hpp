// Asks a compiled NVRTC program every question a program can ask afterwards and keeps the answers
// as one NvrtcResult (nvrtc_result.hpp): the client does it for the NVRTC in its process after a
// local compile (client/src/nvrtc/nvrtc_program.hpp), the compile worker for the NVRTC the
// administrator configured (daemon/compile_worker/nvrtc_compile.hpp), so both store the same
// answers for the same compile. The questions are NVRTC's calls on that program, passed in, as
// neither side's NVRTC is linked.
// Thread safety: as the calls passed in.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <proto/nvrtc_result.hpp>

namespace jitcache::proto {

struct NvrtcQuestions {
  // Whether the library has output `index`'s calls (NvrtcOutput order: log, PTX, CUBIN, LTO-IR, OptiX-IR).
  std::function<bool(std::size_t index)> has_output;
  std::function<std::uint32_t(std::size_t index, std::size_t* size)> size_of;
  std::function<std::uint32_t(std::size_t index, char* out)> bytes_of;
  std::function<std::uint32_t(const char* expression, const char** lowered)> lowered_name;
};

// `compiled`: nvrtcCompileProgram's result; `expressions`: the name expressions, in the order added.
NvrtcResult nvrtc_answers_of(const NvrtcQuestions& ask, std::uint32_t compiled,
                             const std::vector<std::string>& expressions);

}  // namespace jitcache::proto
