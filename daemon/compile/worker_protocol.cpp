#include <daemon/compile/worker_protocol.hpp>

#include <common/result.hpp>
#include <cstring>
#include <string_view>
#include <utility>

namespace jitcache::daemon::compile {

namespace {

using proto::ByteReader;
using proto::ByteWriter;

constexpr std::size_t k_max_arch_length = 32;

void write_magic(ByteWriter& out, const char (&magic)[4]) {
  out.raw(proto::as_bytes(std::string_view(magic, sizeof magic)));
}

common::Result<void> read_magic(ByteReader& in, const char (&magic)[4], std::string_view what) {
  for (char expected : magic) {
    auto byte = in.u8(what);
    JITCACHE_TRY(byte);
    if (*byte != static_cast<std::uint8_t>(expected)) {
      return common::make_error(common::ErrorCode::corrupt, std::string(what) + ": wrong magic");
    }
  }
  return {};
}

}  // namespace

std::vector<std::uint8_t> encode_job(const CompileJob& job) {
  std::vector<std::uint8_t> bytes;
  bytes.reserve(job.ptx.size() + 256);
  ByteWriter out(bytes);
  write_magic(out, k_job_magic);
  out.str16(job.arch);
  out.u16(static_cast<std::uint16_t>(job.nvjitlink_options.size()));
  for (const std::string& option : job.nvjitlink_options) out.str16(option);
  out.blob32(proto::Bytes(job.ptx));
  return bytes;
}

common::Result<CompileJob> decode_job(proto::Bytes bytes) {
  ByteReader in(bytes);
  JITCACHE_TRY(read_magic(in, k_job_magic, "job"));
  CompileJob job;
  auto arch = in.str16("job arch", k_max_arch_length);
  JITCACHE_TRY(arch);
  job.arch = std::string(*arch);
  auto count = in.u16("job option count");
  JITCACHE_TRY(count);
  if (*count > k_max_job_options) {
    return common::make_error(common::ErrorCode::corrupt, "job: " + std::to_string(*count) + " options");
  }
  for (unsigned i = 0; i < *count; ++i) {
    auto option = in.str16("job option", k_max_job_option_length);
    JITCACHE_TRY(option);
    job.nvjitlink_options.emplace_back(*option);
  }
  auto ptx = in.blob32("job ptx");
  JITCACHE_TRY(ptx);
  job.ptx.assign(ptx->begin(), ptx->end());
  JITCACHE_TRY(in.expect_end("job"));
  return job;
}

std::vector<std::uint8_t> encode_reply(const WorkerReply& reply) {
  std::vector<std::uint8_t> bytes;
  bytes.reserve(reply.payload.size() + 32);
  ByteWriter out(bytes);
  write_magic(out, k_reply_magic);
  out.u8(static_cast<std::uint8_t>(reply.status));
  out.u16(static_cast<std::uint16_t>(reply.nvjitlink_major));
  out.u16(static_cast<std::uint16_t>(reply.nvjitlink_minor));
  out.u64(reply.compile_time_us);
  out.u32(reply.nvjitlink_result);
  out.blob32(proto::Bytes(reply.payload));
  return bytes;
}

common::Result<WorkerReply> decode_reply(proto::Bytes bytes) {
  ByteReader in(bytes);
  JITCACHE_TRY(read_magic(in, k_reply_magic, "reply"));
  WorkerReply reply;
  auto status = in.u8("reply status");
  JITCACHE_TRY(status);
  if (*status > static_cast<std::uint8_t>(ReplyStatus::refused)) {
    return common::make_error(common::ErrorCode::corrupt, "reply: unknown status " + std::to_string(*status));
  }
  reply.status = static_cast<ReplyStatus>(*status);
  auto major = in.u16("reply nvJitLink major");
  JITCACHE_TRY(major);
  auto minor = in.u16("reply nvJitLink minor");
  JITCACHE_TRY(minor);
  auto time = in.u64("reply compile time");
  JITCACHE_TRY(time);
  auto result = in.u32("reply nvJitLink result");
  JITCACHE_TRY(result);
  auto payload = in.blob32("reply payload");
  JITCACHE_TRY(payload);
  JITCACHE_TRY(in.expect_end("reply"));
  reply.nvjitlink_major = *major;
  reply.nvjitlink_minor = *minor;
  reply.compile_time_us = *time;
  reply.nvjitlink_result = *result;
  reply.payload.assign(payload->begin(), payload->end());
  return reply;
}

}  // namespace jitcache::daemon::compile
