// The pipe protocol between the daemon and a `jitcache-compile` worker: one job on the worker's
// stdin, one reply on its stdout, then the worker exits. Integers are little-endian, as on the wire
// (proto/byte_io.hpp). docs/compile-service.md has the same tables.
//
//   job    "JCJ1"  str16 arch  u16 n  n × str16 nvJitLink option  blob32 PTX          (then EOF)
//   link   "JCJ2"  str16 arch  u16 n  n × str16 nvJitLink option
//                  u16 m (1..256)  m × (u8 kind (proto/link_content.hpp)  blob32 data)  (then EOF)
//   nvrtc  "JCJ3"  str16 library path  identity  program   (proto/nvrtc_compile_messages.hpp; then EOF)
//   reply  "JCR1"  u8 status  u16 nvJitLink major  u16 minor  u64 compile_time_us
//          u32 nvJitLinkResult of the failing call (0 when compiled)  blob32 payload
//
// str16 is a u16 length and that many bytes (no NUL); blob32 a u32 length and that many bytes. The
// payload is the cubin (status compiled), nvJitLink's full error log (compile_error) or a sentence
// (refused). An NVRTC job's reply carries NVRTC's version in the two version fields and, as status
// compiled, the encoded NVRTC result (proto/nvrtc_result.hpp) whether the source compiled or not (a
// compile error is NVRTC's answer too); refused when NVRTC failed for another reason or the library
// is not the one the daemon probed. A worker that cannot read its job or write its reply exits with one of the k_exit_*
// codes and writes nothing it would have to take back.
//
// This file is compiled into the daemon core, the worker and the tests' fault worker; it depends on
// proto/ only. Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <common/result.hpp>
#include <proto/byte_io.hpp>

#include <daemon/compile/compile_job.hpp>

namespace jitcache::daemon::compile {

inline constexpr char k_job_magic[4] = {'J', 'C', 'J', '1'};
inline constexpr char k_link_job_magic[4] = {'J', 'C', 'J', '2'};
inline constexpr char k_nvrtc_job_magic[4] = {'J', 'C', 'J', '3'};
inline constexpr char k_reply_magic[4] = {'J', 'C', 'R', '1'};
inline constexpr std::size_t k_max_job_options = 256;
inline constexpr std::size_t k_max_job_option_length = 1024;
// Rationale: the largest corpus cubin is 1.6 MB; a reply 100× that is not a cubin anyone loads, and
// the daemon must not buffer without bound what a broken worker writes.
inline constexpr std::size_t k_max_reply_bytes = 256u << 20;

// Worker exit codes besides 0 (a reply was written). Never renumber: the runner maps them.
inline constexpr int k_exit_bad_job = 2;        // stdin did not hold a well-formed job
inline constexpr int k_exit_out_of_memory = 3;  // an allocation failed (RLIMIT_AS)
inline constexpr int k_exit_io = 4;             // reading stdin or writing stdout failed

// Numbered explicitly; never renumber.
enum class ReplyStatus : std::uint8_t {
  compiled = 0,
  compile_error = 1,
  refused = 2,  // nvJitLink itself refused the arch (UNRECOGNIZED_ARCH / UNSUPPORTED_ARCH)
};

struct WorkerReply {
  ReplyStatus status = ReplyStatus::compile_error;
  unsigned nvjitlink_major = 0;
  unsigned nvjitlink_minor = 0;
  std::uint64_t compile_time_us = 0;
  std::uint32_t nvjitlink_result = 0;
  std::vector<std::uint8_t> payload;
};

std::vector<std::uint8_t> encode_job(const CompileJob& job);
// ErrorCode::corrupt with a message naming the field that is wrong.
common::Result<CompileJob> decode_job(proto::Bytes bytes);

std::vector<std::uint8_t> encode_reply(const WorkerReply& reply);
common::Result<WorkerReply> decode_reply(proto::Bytes bytes);

}  // namespace jitcache::daemon::compile
