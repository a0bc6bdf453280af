// What an NVRTC compile answered, as one image blob stored under its key (docs/entry-format.md
// "NVRTC results"): the nvrtcCompileProgram result code, and for every later question a program
// can ask of a compiled program the result code and bytes NVRTC gave: the log, PTX, CUBIN, LTO-IR,
// OptiX-IR, and the lowered name of each name expression. A served program answers from it
// exactly what NVRTC answered (client/src/nvrtc/nvrtc_program.hpp).
//
//   "JCNVRTC1"  8 bytes magic
//   u32         nvrtcCompileProgram's result
//   5 outputs   log, ptx, cubin, ltoir, optixir, each: u8 present (0: the library lacks the call),
//               u32 size call's result, u32 bytes call's result, blob32 bytes
//   u32         count of name expressions, then each: str16 expression, u32 result, str16 lowered
//   u32         nvrtcGetLoweredName's result for an expression that was never added
//
// "JCNVRTC2" is the same followed by u32 count (at least 1) and that many u32 offsets, strictly ascending,
// none past the log's bytes: where the program's directory was cut out of the log, to be put back
// as the directory of the program served (nvrtc_program_directory.hpp, result_in_directory).
//
// Thread safety: pure functions.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include <common/result.hpp>
#include <proto/digest.hpp>

namespace jitcache::proto {

// The outputs in the blob's order.
enum class NvrtcOutput : std::size_t { log, ptx, cubin, ltoir, optixir, count };

struct NvrtcOutputAnswer {
  bool present = false;  // the library has this output's calls
  std::uint32_t size_result = 0;
  std::uint32_t bytes_result = 0;
  std::vector<std::uint8_t> bytes;  // what the bytes call wrote (size as the size call gave it)
  bool operator==(const NvrtcOutputAnswer&) const = default;
};

struct NvrtcLoweredName {
  std::string expression;
  std::uint32_t result = 0;
  std::string lowered;
  bool operator==(const NvrtcLoweredName&) const = default;
};

struct NvrtcResult {
  std::uint32_t compile_result = 0;
  std::array<NvrtcOutputAnswer, static_cast<std::size_t>(NvrtcOutput::count)> outputs;
  std::vector<NvrtcLoweredName> lowered_names;
  std::uint32_t unknown_name_result = 0;
  // Where the program's directory was cut out of the log; empty: the log is as NVRTC gave it.
  std::vector<std::uint32_t> log_directory_at;

  const NvrtcOutputAnswer& output(NvrtcOutput which) const { return outputs[static_cast<std::size_t>(which)]; }
  NvrtcOutputAnswer& output(NvrtcOutput which) { return outputs[static_cast<std::size_t>(which)]; }
  bool operator==(const NvrtcResult&) const = default;
};

inline constexpr std::string_view k_nvrtc_result_magic = "JCNVRTC1";
inline constexpr std::string_view k_nvrtc_result_cut_magic = "JCNVRTC2";  // with log_directory_at

std::vector<std::uint8_t> encode_nvrtc_result(const NvrtcResult& result);
// ErrorCode::corrupt naming the field when the blob is not exactly one well-formed result.
common::Result<NvrtcResult> decode_nvrtc_result(Bytes blob);

}  // namespace jitcache::proto
