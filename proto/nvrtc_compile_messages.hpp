// The NVRTC_COMPILE op's payloads (proto/PROTOCOL.md §5 NVRTC_COMPILE) and their codec: a client
// hands the daemon an NVRTC program as the program gave it to NVRTC, and the daemon compiles it
// with the NVRTC its administrator configured (docs/compile-service.md "NVRTC").
//
//   request  identity     u16 major, u16 minor, 16 bytes XXH3-128 of libnvrtc, 16 of its builtins:
//                         the caller's NVRTC (proto/nvrtc_library_identity.hpp)
//            claimed key  the key the caller computed (PROTOCOL.md §3 key), for the daemon to compare
//                         with the one it computes itself: never used as the entry's key
//            program      str16 name, blob32 source, u16 n + n × (str16 header name, blob32 content),
//                         u16 n + n × str16 option (as passed to nvrtcCompileProgram),
//                         u16 n + n × str16 name expression (in the order added)
//            record       blob32 the include record the caller's key covers
//                         (client/src/nvrtc/include_scan.hpp)
//   reply    u8 origin (0 compiled now, 1 stored already)  blob32 the result (nvrtc_result.hpp)
//
// The program's encoding is also the worker's NVRTC job (daemon/compile/worker_protocol.hpp).
// Rationale for the limits: a name, header name, option or expression is a short string (4 KiB is
// a hundred times CuPy's longest option); 1024 headers and 1024 options are ten times what a
// program passes; 4096 name expressions bound the lowered-name answers. The source, header
// contents and the record are bounded only by the frame limit (max_frame_bytes), as PUT's image is;
// the daemon refuses a program over compile_max_ptx bytes in all (the limit its COMPILE applies).
// Decode errors use ErrorCode::invalid_argument (→ bad_request), naming the field.
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <common/result.hpp>
#include <proto/byte_io.hpp>
#include <proto/key.hpp>
#include <proto/messages.hpp>
#include <proto/nvrtc_key.hpp>

namespace jitcache::proto {

inline constexpr std::size_t k_max_nvrtc_string = 4096;
inline constexpr std::size_t k_max_nvrtc_headers = 1024;
inline constexpr std::size_t k_max_nvrtc_options = 1024;
inline constexpr std::size_t k_max_nvrtc_expressions = 4096;

// A program as NVRTC received it.
struct NvrtcProgramText {
  std::string name;
  std::string source;
  std::vector<std::pair<std::string, std::string>> headers;  // (include name, content), as given at create
  std::vector<std::string> options;                          // as given to nvrtcCompileProgram
  std::vector<std::string> name_expressions;                 // in the order added

  std::uint64_t bytes() const;  // what the program holds, for the size limits
};

struct NvrtcCompileRequest {
  NvrtcIdentity identity;
  KeyFields claimed_key;
  NvrtcProgramText program;
  std::string include_record;
};

// Numbered explicitly: never renumber.
enum class NvrtcCompileOrigin : std::uint8_t { compiled = 0, stored = 1 };

struct NvrtcCompileReply {
  NvrtcCompileOrigin origin = NvrtcCompileOrigin::compiled;
  std::vector<std::uint8_t> result;  // an encoded NvrtcResult
};

void encode_nvrtc_identity(ByteWriter& w, const NvrtcIdentity& identity);
common::Result<NvrtcIdentity> decode_nvrtc_identity(ByteReader& r);
void encode_nvrtc_program(ByteWriter& w, const NvrtcProgramText& program);
common::Result<NvrtcProgramText> decode_nvrtc_program(ByteReader& r);

Payload encode(const NvrtcCompileRequest& m);
common::Result<NvrtcCompileRequest> decode_nvrtc_compile_request(Bytes payload);
Payload encode(const NvrtcCompileReply& m);
common::Result<NvrtcCompileReply> decode_nvrtc_compile_reply(Bytes payload);

bool operator==(const NvrtcIdentity& a, const NvrtcIdentity& b);

}  // namespace jitcache::proto
