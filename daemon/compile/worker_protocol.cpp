#include <daemon/compile/worker_protocol.hpp>

#include <common/result.hpp>
#include <cstring>
#include <proto/compile_messages.hpp>
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

// The job's magic: 1 for a module's job (JCJ1), 2 for a link's (JCJ2), 3 for an NVRTC compile
// (JCJ3); a corrupt error for any other.
common::Result<int> read_job_magic(ByteReader& in) {
  char got[4];
  for (char& byte : got) {
    auto read = in.u8("job");
    JITCACHE_TRY(read);
    byte = static_cast<char>(*read);
  }
  if (std::memcmp(got, k_job_magic, sizeof got) == 0) return 1;
  if (std::memcmp(got, k_link_job_magic, sizeof got) == 0) return 2;
  if (std::memcmp(got, k_nvrtc_job_magic, sizeof got) == 0) return 3;
  return common::make_error(common::ErrorCode::corrupt, "job: wrong magic");
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
  bytes.reserve(job.source_bytes() + 256 + 5 * job.link_inputs.size());
  ByteWriter out(bytes);
  if (job.nvrtc) {
    write_magic(out, k_nvrtc_job_magic);
    out.str16(job.nvrtc->library);
    proto::encode_nvrtc_identity(out, job.nvrtc->identity);
    proto::encode_nvrtc_program(out, job.nvrtc->program);
    return bytes;
  }
  const bool link = !job.link_inputs.empty();
  write_magic(out, link ? k_link_job_magic : k_job_magic);
  out.str16(job.arch);
  out.u16(static_cast<std::uint16_t>(job.nvjitlink_options.size()));
  for (const std::string& option : job.nvjitlink_options) out.str16(option);
  if (!link) {
    out.blob32(proto::Bytes(job.ptx));
    return bytes;
  }
  out.u16(static_cast<std::uint16_t>(job.link_inputs.size()));
  for (const LinkJobInput& input : job.link_inputs) {
    out.u8(static_cast<std::uint8_t>(input.kind));
    out.blob32(proto::Bytes(input.data));
  }
  return bytes;
}

namespace {

common::Result<std::vector<LinkJobInput>> decode_link_inputs(ByteReader& in) {
  auto count = in.u16("job link input count");
  JITCACHE_TRY(count);
  if (*count == 0 || *count > proto::k_max_compile_link_inputs) {
    return common::make_error(common::ErrorCode::corrupt, "job: " + std::to_string(*count) + " link inputs");
  }
  std::vector<LinkJobInput> inputs;
  for (unsigned i = 0; i < *count; ++i) {
    auto kind = in.u8("job link input kind");
    JITCACHE_TRY(kind);
    if (!proto::is_link_input_kind(*kind)) {
      return common::make_error(common::ErrorCode::corrupt, "job: link input kind " + std::to_string(*kind));
    }
    auto data = in.blob32("job link input");
    JITCACHE_TRY(data);
    inputs.push_back(LinkJobInput{static_cast<proto::LinkInputKind>(*kind), {data->begin(), data->end()}});
  }
  return inputs;
}

}  // namespace

common::Result<CompileJob> decode_job(proto::Bytes bytes) {
  ByteReader in(bytes);
  auto magic = read_job_magic(in);
  JITCACHE_TRY(magic);
  const bool link = *magic == 2;
  CompileJob job;
  if (*magic == 3) {
    NvrtcJob nvrtc;
    auto library = in.str16("job nvrtc library", k_max_job_option_length);
    JITCACHE_TRY(library);
    nvrtc.library = std::string(*library);
    JITCACHE_TRY_ASSIGN(nvrtc.identity, proto::decode_nvrtc_identity(in));
    JITCACHE_TRY_ASSIGN(nvrtc.program, proto::decode_nvrtc_program(in));
    JITCACHE_TRY(in.expect_end("job"));
    job.nvrtc = std::move(nvrtc);
    return job;
  }
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
  if (link) {
    auto inputs = decode_link_inputs(in);
    JITCACHE_TRY(inputs);
    job.link_inputs = std::move(*inputs);
  } else {
    auto ptx = in.blob32("job ptx");
    JITCACHE_TRY(ptx);
    job.ptx.assign(ptx->begin(), ptx->end());
  }
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
