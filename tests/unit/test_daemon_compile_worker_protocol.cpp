// The daemon ↔ jitcache-compile pipe protocol (daemon/compile/worker_protocol.hpp): round trips,
// and every truncation or corruption is an error, never a misread job or reply.
#include <catch2/catch.hpp>

#include <daemon/compile/worker_protocol.hpp>

namespace {

using namespace jitcache::daemon::compile;

CompileJob sample_job() {
  CompileJob job;
  job.arch = "sm_100f";
  job.nvjitlink_options = {"-Xptxas=-O4", "-maxrregcount=32"};
  const std::string ptx = ".version 9.0\n.target sm_100f\n";
  job.ptx.assign(ptx.begin(), ptx.end());
  return job;
}

WorkerReply sample_reply() {
  WorkerReply reply;
  reply.status = ReplyStatus::compile_error;
  reply.nvjitlink_major = 13;
  reply.nvjitlink_minor = 0;
  reply.compile_time_us = 123456;
  reply.nvjitlink_result = 4;
  const std::string log = "ptxas fatal : something";
  reply.payload.assign(log.begin(), log.end());
  return reply;
}

}  // namespace

TEST_CASE("compile worker protocol: a job and a reply survive encoding unchanged") {
  const CompileJob job = sample_job();
  auto decoded = decode_job(encode_job(job));
  REQUIRE(decoded);
  CHECK(decoded->arch == job.arch);
  CHECK(decoded->nvjitlink_options == job.nvjitlink_options);
  CHECK(decoded->ptx == job.ptx);

  const WorkerReply reply = sample_reply();
  auto back = decode_reply(encode_reply(reply));
  REQUIRE(back);
  CHECK(back->status == reply.status);
  CHECK(back->nvjitlink_major == 13);
  CHECK(back->nvjitlink_minor == 0);
  CHECK(back->compile_time_us == 123456);
  CHECK(back->nvjitlink_result == 4);
  CHECK(back->payload == reply.payload);
}

TEST_CASE("compile worker protocol: every truncation of a job or a reply is an error") {
  const auto job = encode_job(sample_job());
  for (std::size_t n = 0; n < job.size(); ++n) {
    INFO(n);
    CHECK_FALSE(decode_job(jitcache::proto::Bytes(job).first(n)));
  }
  const auto reply = encode_reply(sample_reply());
  for (std::size_t n = 0; n < reply.size(); ++n) {
    INFO(n);
    CHECK_FALSE(decode_reply(jitcache::proto::Bytes(reply).first(n)));
  }
}

TEST_CASE("compile worker protocol: wrong magic, unknown status and trailing bytes are errors") {
  auto job = encode_job(sample_job());
  job[3] = '2';
  CHECK_FALSE(decode_job(job));

  auto reply = encode_reply(sample_reply());
  reply.push_back(0);
  CHECK_FALSE(decode_reply(reply));
  reply.pop_back();
  reply[4] = 3;  // status
  CHECK_FALSE(decode_reply(reply));
  CHECK_FALSE(decode_reply(encode_job(sample_job())));
}

TEST_CASE("compile worker protocol: a link job carries its inputs in order, and is JCJ2 on the pipe") {
  CompileJob job = sample_job();
  job.ptx.clear();
  const std::string first = ".version 9.0\n";
  const std::string second = "!<arch>\n";
  job.link_inputs = {{jitcache::proto::LinkInputKind::ptx, {first.begin(), first.end()}},
                     {jitcache::proto::LinkInputKind::library, {second.begin(), second.end()}}};
  const auto bytes = encode_job(job);
  CHECK(std::string(bytes.begin(), bytes.begin() + 4) == "JCJ2");
  auto decoded = decode_job(bytes);
  REQUIRE(decoded);
  CHECK(decoded->ptx.empty());
  REQUIRE(decoded->link_inputs.size() == 2);
  CHECK(decoded->link_inputs[0].kind == jitcache::proto::LinkInputKind::ptx);
  CHECK(decoded->link_inputs[1].data == job.link_inputs[1].data);
  CHECK(decoded->nvjitlink_options == job.nvjitlink_options);
  for (std::size_t cut = 0; cut < bytes.size(); ++cut) {
    INFO(cut);
    CHECK_FALSE(decode_job(jitcache::proto::Bytes(bytes.data(), cut)));
  }
  auto bad_kind = bytes;
  // The first input's kind follows the header, the options and the u16 count.
  const std::size_t kind_at = 4 + 2 + job.arch.size() + 2 + (2 + 11) + (2 + 16) + 2;
  REQUIRE(bad_kind[kind_at] == 1);
  bad_kind[kind_at] = 9;
  CHECK_FALSE(decode_job(bad_kind));
}

TEST_CASE("compile worker protocol: an NVRTC job carries its library, identity and program, and is JCJ3 on the pipe") {
  CompileJob job;
  NvrtcJob nvrtc;
  nvrtc.library = "/usr/local/cuda/lib64/libnvrtc.so.13";
  nvrtc.identity = {13, 0, jitcache::proto::xxh3_128(jitcache::proto::as_bytes("lib")),
                    jitcache::proto::xxh3_128(jitcache::proto::as_bytes("builtins"))};
  nvrtc.program.name = "kernel.cu";
  nvrtc.program.source = "#include \"h.cuh\"\n__global__ void k() {}\n";
  nvrtc.program.headers = {{"h.cuh", "#define H 1\n"}};
  nvrtc.program.options = {"-arch=sm_90", "-DX=1"};
  nvrtc.program.name_expressions = {"k"};
  job.nvrtc = nvrtc;
  const auto bytes = encode_job(job);
  CHECK(std::string(bytes.begin(), bytes.begin() + 4) == "JCJ3");
  auto decoded = decode_job(bytes);
  REQUIRE(decoded);
  REQUIRE(decoded->nvrtc);
  CHECK(decoded->nvrtc->library == nvrtc.library);
  CHECK(decoded->nvrtc->identity == nvrtc.identity);
  CHECK(decoded->nvrtc->program.source == nvrtc.program.source);
  CHECK(decoded->nvrtc->program.headers == nvrtc.program.headers);
  CHECK(decoded->nvrtc->program.options == nvrtc.program.options);
  CHECK(decoded->nvrtc->program.name_expressions == nvrtc.program.name_expressions);
  CHECK(decoded->ptx.empty());
  for (std::size_t cut = 0; cut < bytes.size(); ++cut) {
    INFO(cut);
    CHECK_FALSE(decode_job(jitcache::proto::Bytes(bytes.data(), cut)));
  }
}
