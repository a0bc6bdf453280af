// The NVRTC key's parts (docs/cache-key.md "NVRTC compiles"): the option table, the result blob
// every served program answers from, and the key built from a compile's inputs.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include <proto/include_record_lines.hpp>
#include <proto/jit_options.hpp>
#include <proto/key.hpp>
#include <proto/nvrtc_compile_messages.hpp>
#include <proto/nvrtc_daemon_eligibility.hpp>
#include <proto/nvrtc_key.hpp>
#include <proto/nvrtc_options.hpp>
#include <proto/nvrtc_program_directory.hpp>
#include <proto/nvrtc_result.hpp>

using namespace jitcache::proto;
using jitcache::common::ErrorCode;

namespace {

jitcache::common::Result<NvrtcOptions> canonical(const std::vector<const char*>& options) {
  return canonicalize_nvrtc_options(static_cast<int>(options.size()), options.data());
}

NvrtcCompileInput sample_input() {
  NvrtcCompileInput input;
  input.identity = {13, 0, xxh3_128(as_bytes("libnvrtc")), xxh3_128(as_bytes("builtins"))};
  input.name = "kernel.cu";
  input.source = "__global__ void k() {}";
  input.headers = {{"a.cuh", "#define A 1"}};
  input.options = *canonical({"-arch=sm_90", "-I/opt/include"});
  input.name_expressions = {"k"};
  input.include_record = std::string("/opt/include/a.cuh\0absent\n", 26);
  return input;
}

}  // namespace

TEST_CASE("nvrtc options: code options are keyed verbatim in order, include paths and pre-includes are found") {
  auto options = canonical({"-I/opt/a", "--include-path=/opt/b", "-DX=1", "--std=c++17", "-include=pre.h",
                            "--gpu-architecture=compute_90a", "-lineinfo"});
  REQUIRE(options);
  CHECK(options->keyed == std::vector<std::string>{"-I/opt/a", "--include-path=/opt/b", "-DX=1", "--std=c++17",
                                                   "-include=pre.h", "--gpu-architecture=compute_90a", "-lineinfo"});
  CHECK(options->include_paths == std::vector<std::string>{"/opt/a", "/opt/b"});
  CHECK(options->pre_includes == std::vector<std::string>{"pre.h"});
  CHECK(options->arch == "sm_90a");
  CHECK(options->debug_info);
  auto defaults = canonical({});
  REQUIRE(defaults);
  CHECK(defaults->arch == "sm_75");
  CHECK_FALSE(defaults->debug_info);
}

TEST_CASE("nvrtc options: side effects, unknown options and unclear forms pass through") {
  for (const char* option :
       {"--create-pch=x.pch", "--use-pch=x.pch", "--pch-dir=/tmp", "-pch", "--time=t.csv", "-fdevice-time-trace=t.json",
        "--no-such-option", "-I", "-D", "-include", "-arch=native"}) {
    INFO(option);
    auto options = canonical({option});
    REQUIRE_FALSE(options);
    CHECK(options.error().code == ErrorCode::unsupported);
  }
  CHECK_FALSE(canonical({"-arch=sm_80", "-arch=sm_90"}));
  const char* null_option[] = {nullptr};
  CHECK_FALSE(canonicalize_nvrtc_options(1, null_option));
}

TEST_CASE("nvrtc result: every answer survives the blob, and a damaged blob is refused") {
  NvrtcResult result;
  result.compile_result = 6;
  result.output(NvrtcOutput::log) = {true, 0, 0, {'e', 'r', 'r', '\0'}};
  result.output(NvrtcOutput::ptx) = {true, 0, 0, {'.', 'v', '\0'}};
  result.output(NvrtcOutput::cubin) = {true, 0, 0, {}};
  result.output(NvrtcOutput::optixir) = {false, 0, 0, {}};
  result.lowered_names = {{"scale<float>", 0, "_Z5scaleIfEvPT_"}, {"k", 9, ""}};
  result.unknown_name_result = 10;
  const std::vector<std::uint8_t> blob = encode_nvrtc_result(result);
  auto decoded = decode_nvrtc_result(blob);
  REQUIRE(decoded);
  CHECK(*decoded == result);

  for (std::size_t cut : {std::size_t{0}, std::size_t{7}, std::size_t{12}, blob.size() - 1}) {
    INFO(cut);
    CHECK_FALSE(decode_nvrtc_result(Bytes(blob.data(), cut)));
  }
  std::vector<std::uint8_t> longer = blob;
  longer.push_back(0);
  CHECK_FALSE(decode_nvrtc_result(longer));
  std::vector<std::uint8_t> cubin_like = blob;
  cubin_like[0] = 0x7f;
  CHECK_FALSE(decode_nvrtc_result(cubin_like));
}

namespace {

NvrtcResult with_log(const std::string& log, const std::string& ptx = ".visible .entry k()") {
  NvrtcResult result;
  result.output(NvrtcOutput::log) = {true, 0, 0, std::vector<std::uint8_t>(log.begin(), log.end())};
  result.output(NvrtcOutput::log).bytes.push_back('\0');
  result.output(NvrtcOutput::ptx) = {true, 0, 0, std::vector<std::uint8_t>(ptx.begin(), ptx.end())};
  result.lowered_names = {{"scale<float>", 0, "_Z5scaleIfEvPT_"}};
  return result;
}

std::string log_of(const NvrtcResult& result) {
  const auto& bytes = result.output(NvrtcOutput::log).bytes;
  return std::string(bytes.begin(), bytes.end() - 1);
}

}  // namespace

TEST_CASE("nvrtc result: a log with the program's directory cut out survives the blob (JCNVRTC2), damage refused") {
  NvrtcResult result = with_log("k.cu(3): warning");
  result.log_directory_at = {0, 4};
  const std::vector<std::uint8_t> blob = encode_nvrtc_result(result);
  REQUIRE(std::string(blob.begin(), blob.begin() + 8) == "JCNVRTC2");
  auto decoded = decode_nvrtc_result(blob);
  REQUIRE(decoded);
  CHECK(*decoded == result);
  const std::vector<std::uint8_t> uncut = encode_nvrtc_result(with_log("x"));
  CHECK(std::string(uncut.begin(), uncut.begin() + 8) == "JCNVRTC1");  // nothing cut: the first format
  const auto damaged = [&](std::uint32_t count, std::vector<std::uint32_t> offsets) {
    std::vector<std::uint8_t> bytes = encode_nvrtc_result(with_log("k.cu(3): warning"));
    bytes[7] = '2';
    const auto put = [&](std::uint32_t v) {
      for (int i = 0; i < 4; ++i) bytes.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
    };
    put(count);
    for (const std::uint32_t at : offsets) put(at);
    return decode_nvrtc_result(bytes);
  };
  CHECK(damaged(2, {0, 4}));
  CHECK_FALSE(damaged(0, {}));         // JCNVRTC2 cuts something
  CHECK_FALSE(damaged(2, {4, 0}));     // out of order
  CHECK_FALSE(damaged(2, {4, 4}));     // twice the same place
  CHECK_FALSE(damaged(1, {18}));       // past the log (17 bytes with its NUL)
  CHECK_FALSE(damaged(3, {0, 4}));     // fewer offsets than counted
  CHECK_FALSE(damaged(1000000, {0}));  // a count the blob cannot hold
}

TEST_CASE("nvrtc program directory: a log naming the program travels without its directory, to the name served") {
  const std::string first = "/tmp/tmpa1/0f3c.cubin.cu";
  const std::string second = "/tmp/tmpz9y8x7w6/0f3c.cubin.cu";
  const std::string log = first + "(3): warning #177-D: unused\n          detected during instantiation at line 4 of " +
                          first + "\n\nRemark: ...\n";
  const auto cut = result_without_directory(with_log(log), first);
  REQUIRE(cut);
  CHECK(cut->log_directory_at.size() == 2);
  CHECK(log_of(*cut).find("/tmp/tmpa1") == std::string::npos);
  auto served = result_in_directory(*cut, second);
  REQUIRE(served);
  CHECK(served->log_directory_at.empty());
  std::string expected = log;
  for (std::size_t at = expected.find(first); at != std::string::npos; at = expected.find(first, at + 1)) {
    expected.replace(at, first.size(), second);
  }
  CHECK(log_of(*served) == expected);
  CHECK(served->output(NvrtcOutput::ptx) == cut->output(NvrtcOutput::ptx));
  CHECK(result_in_directory(*cut, first)->output(NvrtcOutput::log) == with_log(log).output(NvrtcOutput::log));
  CHECK_FALSE(result_in_directory(*cut, "/tmp/tmp z9/0f3c.cubin.cu"));  // not plain: not served
  CHECK(result_in_directory(with_log("x"), "relative/k.cu"));           // nothing cut: as it is
  NvrtcResult bomb = with_log(std::string(100000, 'x'));
  for (std::uint32_t at = 0; at < 100000; ++at) bomb.log_directory_at.push_back(at);
  CHECK_FALSE(result_in_directory(bomb, "/" + std::string(1000, 'd') + "/k.cu"));  // 100 MB: refused

  // Refused: the directory elsewhere, or in a form the cut cannot put back exactly.
  CHECK_FALSE(result_without_directory(with_log("no name here"), first));
  CHECK_FALSE(result_without_directory(with_log(log + "#error /tmp/tmpa1 alone\n"), first));
  CHECK_FALSE(result_without_directory(with_log(log + "/x" + first + "(1): warning\n"), first));  // a longer path
  CHECK_FALSE(result_without_directory(with_log(log, "// " + first), first));                     // the PTX
  NvrtcResult lowered = with_log(log);
  lowered.lowered_names[0].lowered = "_Z" + first;
  CHECK_FALSE(result_without_directory(lowered, first));
  CHECK_FALSE(result_without_directory(with_log("tmp a1/k.cu(3): warning"), "/tmp/tmp a1/k.cu"));  // not plain
  CHECK_FALSE(result_without_directory(with_log("rel/k.cu(3): warning"), "rel/k.cu"));             // not absolute
  CHECK(plain_program_directory(first));
  CHECK_FALSE(plain_program_directory("/tmp/tmp\"a/k.cu"));
  CHECK_FALSE(plain_program_directory("k.cu"));
}

TEST_CASE("nvrtc key: valid for the daemon, marked apart from loads and links, and every input changes it") {
  const NvrtcCompileInput input = sample_input();
  auto key = nvrtc_key(input);
  REQUIRE(key);
  CHECK(validate_key(key->fields));
  CHECK(key->fields.options == "compiler=nvrtc");
  CHECK(canonicalize_option_text("compiler=nvrtc").value() == "compiler=nvrtc");
  CHECK(link_flavor(key->fields.options) == LinkFlavor::none);
  CHECK(key->fields.arch == "sm_90");
  CHECK(key->fields.driver_api == 13000);
  CHECK(key->fields.driver_build.starts_with("nvrtc-13.0-"));

  const auto differs = [&](auto change) {
    NvrtcCompileInput changed = sample_input();
    change(changed);
    auto other = nvrtc_key(changed);
    REQUIRE(other);
    return key_id(other->fields) != key_id(key->fields) && other->content_fast != key->content_fast;
  };
  CHECK(differs([](NvrtcCompileInput& in) { in.identity.minor = 1; }));
  CHECK(differs([](NvrtcCompileInput& in) { in.identity.library = xxh3_128(as_bytes("other")); }));
  CHECK(differs([](NvrtcCompileInput& in) { in.identity.builtins = xxh3_128(as_bytes("other")); }));
  CHECK(differs([](NvrtcCompileInput& in) { in.name = "other.cu"; }));
  CHECK(differs([](NvrtcCompileInput& in) { in.source += " "; }));
  CHECK(differs([](NvrtcCompileInput& in) { in.headers[0].second = "#define A 2"; }));
  CHECK(differs([](NvrtcCompileInput& in) { in.headers[0].first = "b.cuh"; }));
  CHECK(differs([](NvrtcCompileInput& in) { in.headers.clear(); }));
  CHECK(differs([](NvrtcCompileInput& in) { in.options.keyed.push_back("-G"); }));
  CHECK(differs([](NvrtcCompileInput& in) { std::swap(in.options.keyed[0], in.options.keyed[1]); }));
  CHECK(differs([](NvrtcCompileInput& in) { in.name_expressions.push_back("k2"); }));
  CHECK(differs([](NvrtcCompileInput& in) { in.include_record += "x"; }));
  CHECK(differs([](NvrtcCompileInput& in) { in.working_directory = "/home/a"; }));
  // A source ending where a header begins is not another split of the same bytes.
  CHECK(differs([](NvrtcCompileInput& in) {
    in.source += "a.cuh";
    in.headers[0].first.clear();
  }));
}

TEST_CASE("include record lines: each path and state in order, and a line without its NUL or newline refused") {
  using namespace std::string_literals;
  const std::string record = "/a/b.cuh\0file 0f\nrel/c.h\0absent\n\0other\n"s;  // the lines view it
  const auto lines = include_record_lines(record);
  REQUIRE(lines);
  REQUIRE(lines->size() == 3);
  CHECK((*lines)[0].path == "/a/b.cuh");
  CHECK((*lines)[0].state == "file 0f");
  CHECK((*lines)[1].path == "rel/c.h");
  CHECK((*lines)[1].state == "absent");
  CHECK((*lines)[2].path.empty());
  CHECK((*lines)[2].state == "other");
  CHECK(include_record_lines("")->empty());
  CHECK_FALSE(include_record_lines("/a\0absent"s));       // no newline
  CHECK_FALSE(include_record_lines("/a absent\n"s));      // no NUL
  CHECK_FALSE(include_record_lines("/a\nb\0absent\n"s));  // the NUL after the line's end
}

TEST_CASE("nvrtc daemon eligibility: only a compile that reads nothing from disk is the daemon's") {
  const auto refusal = [](const std::vector<const char*>& options, const std::string& record) {
    auto canonical_options = canonical(options);
    REQUIRE(canonical_options);
    return nvrtc_daemon_refusal(*canonical_options, record);
  };
  const std::string absent = std::string("kernel.cu\0absent\n", 17) + std::string("sub/h.cuh\0absent\n", 17);
  CHECK_FALSE(refusal({"-arch=sm_90", "-DX=1", "-std=c++17"}, absent));
  CHECK_FALSE(refusal({}, ""));
  CHECK(refusal({"-I/opt/include"}, ""));
  CHECK(refusal({"--include-path=inc"}, ""));
  CHECK(refusal({"--pre-include=pre.h"}, ""));
  CHECK(refusal({"-G"}, ""));
  CHECK(refusal({"-lineinfo"}, ""));
  CHECK(refusal({}, std::string("/etc/passwd\0absent\n", 19)));
  CHECK(refusal({}, std::string("../h.cuh\0absent\n", 16)));
  CHECK(refusal({}, std::string("a/../h.cuh\0absent\n", 18)));
  CHECK(refusal({}, std::string("a/..\0absent\n", 12)));
  CHECK(refusal({}, std::string("h.cuh\0file 0123\n", 16)));
  CHECK(refusal({}, std::string("h.cuh\0other\n", 12)));
  CHECK(refusal({}, "h.cuh absent\n"));                               // malformed
  CHECK(refusal({}, std::string("h.cuh\0absent", 12)));               // unterminated
  CHECK_FALSE(refusal({}, std::string("a..b/h.cuh\0absent\n", 18)));  // ".." only as a whole part
}

TEST_CASE("nvrtc compile messages: a request and a reply survive encoding, and every truncation is an error") {
  NvrtcCompileRequest request;
  request.identity = {13, 0, xxh3_128(as_bytes("libnvrtc")), xxh3_128(as_bytes("builtins"))};
  auto key = nvrtc_key(sample_input());
  REQUIRE(key);
  request.claimed_key = key->fields;
  request.program = {"kernel.cu", "__global__ void k() {}", {{"a.cuh", "#define A 1"}}, {"-arch=sm_90"}, {"k"}};
  request.include_record = std::string("a.cuh\0absent\n", 13);
  const Payload bytes = encode(request);
  auto decoded = decode_nvrtc_compile_request(bytes);
  REQUIRE(decoded);
  CHECK(encode(*decoded) == bytes);
  CHECK(decoded->claimed_key == request.claimed_key);
  CHECK(decoded->program.headers == request.program.headers);
  for (std::size_t cut = 0; cut < bytes.size(); ++cut) {
    INFO(cut);
    CHECK_FALSE(decode_nvrtc_compile_request(Bytes(bytes.data(), cut)));
  }
  const Payload reply = encode(NvrtcCompileReply{NvrtcCompileOrigin::stored, {1, 2, 3}});
  auto decoded_reply = decode_nvrtc_compile_reply(reply);
  REQUIRE(decoded_reply);
  CHECK(decoded_reply->origin == NvrtcCompileOrigin::stored);
  CHECK(decoded_reply->result == std::vector<std::uint8_t>{1, 2, 3});
  Payload bad_origin = reply;
  bad_origin[0] = 2;
  CHECK_FALSE(decode_nvrtc_compile_reply(bad_origin));
}
