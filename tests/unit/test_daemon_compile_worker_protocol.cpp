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
