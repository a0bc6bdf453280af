// The process report's document (client/src/loader/report_json.hpp) and path
// (client/src/loader/process_report.hpp), without a process exiting: what any JSON parser reads
// back, whatever bytes a compiler log put into a reason, and where each process's report goes.
// The report written at a real exit is tested in tests/integration/test_client_process_report.cpp.
#include <catch2/catch.hpp>

#include <cstring>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include <client/src/loader/json_text.hpp>
#include <client/src/loader/process_report.hpp>
#include <client/src/loader/report_json.hpp>

using namespace jitcache::client::loader;
using Json = nlohmann::json;

namespace {

std::string as_json_string(std::string_view text) {
  std::string out;
  append_json_string(out, text);
  return out;
}

ReportedLoad load_with_reason(std::string_view reason) {
  ReportedLoad load;
  std::strcpy(load.entry_point, "cuLibraryLoadData");
  load.info.struct_size = sizeof load.info;
  load.info.outcome = JITCACHE_OUTCOME_UNCACHED_FALLBACK;
  load.info.result = CUDA_ERROR_INVALID_PTX;
  load.info.stage = JITCACHE_STAGE_JIT;
  load.info.stage_result = CUDA_ERROR_INVALID_PTX;
  std::strcpy(load.info.result_name, "CUDA_ERROR_INVALID_PTX");
  std::memcpy(load.info.reason, reason.data(), reason.size());
  std::strcpy(load.info.arch, "sm_90a");
  load.info.ns_total = 1234;
  load.info.ns_compile = 1000;
  return load;
}

}  // namespace

TEST_CASE("report json: valid UTF-8 is kept, invalid bytes become U+FFFD and controls are escaped") {
  CHECK(as_json_string("plain") == "\"plain\"");
  CHECK(as_json_string("a \"quoted\" \\ path") == R"("a \"quoted\" \\ path")");
  CHECK(as_json_string("line\nnext\ttab\r") == R"("line\nnext\ttab\r")");
  CHECK(as_json_string(std::string_view("\x01\x1f\x7f", 3)) == R"("\u0001\u001f\u007f")");
  CHECK(as_json_string("café ✓ 𝄞") == "\"café ✓ 𝄞\"");
  // A lone continuation byte, a truncated sequence, an overlong '/', a surrogate, past U+10FFFF.
  CHECK(as_json_string("\x80") == R"("\ufffd")");
  CHECK(as_json_string("\xe2\x9c") == R"("\ufffd\ufffd")");
  CHECK(as_json_string("\xc0\xaf") == R"("\ufffd\ufffd")");
  CHECK(as_json_string("\xed\xa0\x80") == R"("\ufffd\ufffd\ufffd")");
  CHECK(as_json_string("\xf4\x90\x80\x80") == R"("\ufffd\ufffd\ufffd\ufffd")");

  // Every byte value, in every position a parser could stumble on, reads back.
  std::string all;
  for (int c = 0; c < 256; ++c) all += static_cast<char>(c);
  Json parsed;
  REQUIRE_NOTHROW(parsed = Json::parse(as_json_string(all)));
  CHECK(parsed.get<std::string>().substr(0, 128) == all.substr(0, 128));
}

TEST_CASE("report json: a document of loads with hostile reasons parses, with every counter by name") {
  ReportedLoad first = load_with_reason("ptxas fatal: \"x\"\n\xff\xfe in \x1b[31mred");
  ReportedLoad second = load_with_reason("fine");
  second.info.outcome = JITCACHE_OUTCOME_HIT;
  const std::vector<const ReportedLoad*> loads{&first, &second};
  ReportSnapshot snapshot;
  snapshot.program = "/usr/bin/python3";
  snapshot.comm = "python3";
  snapshot.exe = "/usr/bin/python3.11";
  snapshot.pid = 4242;
  snapshot.forked_from = 4241;
  snapshot.counters.loads = 3;
  snapshot.counters.lookups = 9;
  snapshot.outcomes[JITCACHE_OUTCOME_HIT] = 2;
  snapshot.outcomes[JITCACHE_OUTCOME_UNCACHED_FALLBACK] = 1;
  snapshot.loads = loads;
  snapshot.dropped = 1;
  snapshot.limit = ProcessReport::k_max_loads;

  Json report;
  REQUIRE_NOTHROW(report = Json::parse(render_report(snapshot)));
  CHECK(report["pid"] == 4242);
  CHECK(report["forked_from"] == 4241);
  CHECK(report["counters"]["loads"] == 3);
  CHECK(report["counters"]["lookups"] == 9);
  CHECK(report["counters"].size() == counter_fields().size());
  CHECK(report["outcomes"]["hit"] == 2);
  CHECK(report["outcomes"]["uncached_fallback"] == 1);
  CHECK(report["outcomes"].size() == 6);
  CHECK(report["loads_kept"] == 2);
  CHECK(report["loads_dropped"] == 1);
  REQUIRE(report["loads"].size() == 2);
  const Json& failed = report["loads"][0];
  CHECK(failed["entry_point"] == "cuLibraryLoadData");
  CHECK(failed["outcome"] == "uncached_fallback");
  CHECK(failed["result"] == "CUDA_ERROR_INVALID_PTX");
  CHECK(failed["result_code"] == 218);
  CHECK(failed["stage"] == "jit");
  CHECK(failed["stage_result"] == "CUDA_ERROR_INVALID_PTX");
  CHECK(failed["ns_total"] == 1234);
  CHECK(failed["ns_compile"] == 1000);
  CHECK(failed["reason"] == "ptxas fatal: \"x\"\n\xef\xbf\xbd\xef\xbf\xbd in \x1b[31mred");
  CHECK(report["loads"][1]["outcome"] == "hit");

  // An empty report is a document too.
  snapshot.loads = {};
  snapshot.forked_from.reset();
  REQUIRE_NOTHROW(report = Json::parse(render_report(snapshot)));
  CHECK(report["loads"].empty());
  CHECK_FALSE(report.contains("forked_from"));
}

TEST_CASE("report json: every counter of jitcache_counters has one distinct name") {
  std::set<std::string> names;
  for (const CounterField& field : counter_fields()) names.insert(field.name);
  CHECK(names.size() == counter_fields().size());
  CHECK(sizeof(jitcache_counters) == sizeof(std::size_t) + names.size() * sizeof(std::uint64_t));
}

TEST_CASE("process report: %p in the path becomes the pid, %% a percent sign, anything else stays") {
  CHECK(expand_report_path("/tmp/report.json", 7) == "/tmp/report.json");
  CHECK(expand_report_path("/tmp/r-%p.json", 1234) == "/tmp/r-1234.json");
  CHECK(expand_report_path("%p/%p", 5) == "5/5");
  CHECK(expand_report_path("100%%-%p", 9) == "100%-9");
  CHECK(expand_report_path("%s %q %", 3) == "%s %q %");
}
