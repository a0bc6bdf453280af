// map_options (daemon/compile/option_mapping.hpp): every key of the canonical option string maps to
// the nvJitLink options docs/compile-service.md tables, or to a refusal naming it; and every mapped
// option is one the real nvJitLink accepts and compiles with.
#include <catch2/catch.hpp>

#include <nvJitLink.h>

#include <string>
#include <vector>

#include <proto/jit_options.hpp>

#include <daemon/compile/option_mapping.hpp>

#include <tests/support/temp_dir.hpp>

namespace {

using jitcache::daemon::compile::map_options;
using jitcache::daemon::compile::MappedOptions;
using jitcache::daemon::compile::RefusalReason;
using Options = std::vector<std::string>;

MappedOptions mapped(const std::string& text) {
  auto canonical = jitcache::proto::canonicalize_option_text(text);
  REQUIRE(canonical);
  auto result = map_options(*canonical);
  REQUIRE(result);
  return *result;
}

Options options_for(const std::string& text) {
  const MappedOptions m = mapped(text);
  INFO(text << " was refused: " << (m.refusal ? m.refusal->message : ""));
  REQUIRE_FALSE(m.refusal);
  return m.nvjitlink_options;
}

// Links small_kernel.ptx for sm_90 with the options; the nvJitLink result of the first failing call.
int link_with(const Options& options) {
  const std::string ptx = jitcache::testing::read_file(std::string(JITCACHE_TEST_DATA_DIR) + "/small_kernel.ptx");
  std::vector<const char*> pointers{"-arch=sm_90"};
  for (const auto& option : options) pointers.push_back(option.c_str());
  nvJitLinkHandle handle = nullptr;
  int result = nvJitLinkCreate(&handle, static_cast<std::uint32_t>(pointers.size()), pointers.data());
  if (result != NVJITLINK_SUCCESS) return result;
  result = nvJitLinkAddData(handle, NVJITLINK_INPUT_PTX, ptx.data(), ptx.size(), "small_kernel.ptx");
  if (result == NVJITLINK_SUCCESS) result = nvJitLinkComplete(handle);
  nvJitLinkDestroy(&handle);
  return result;
}

struct Case {
  const char* text;
  Options expected;  // after "-Xptxas=-O4" unless the case sets opt
};

const std::vector<Case> k_cases = {
    {"maxrreg=32", {"-maxrregcount=32", "-Xptxas=-O4"}},
    {"opt=0", {"-Xptxas=-O0"}},
    {"opt=2", {"-Xptxas=-O2"}},
    {"opt=0;g=1", {"-Xptxas=-O0", "-g"}},
    {"lineinfo=1", {"-Xptxas=-O4", "-lineinfo"}},
    {"dlcm=cg", {"-Xptxas=-O4", "-Xptxas=-dlcm=cg"}},
    {"dlcm=ca", {"-Xptxas=-O4", "-Xptxas=-dlcm=ca"}},
    {"ftz=1", {"-Xptxas=-O4", "-ftz=true"}},
    {"prec_div=0", {"-Xptxas=-O4", "-prec-div=false"}},
    {"prec_sqrt=0", {"-Xptxas=-O4", "-prec-sqrt=false"}},
    {"fma=0", {"-Xptxas=-O4", "-fma=false"}},
    {"pic=1", {"-Xptxas=-O4", "-Xptxas=--position-independent-code=true"}},
    {"mincta=2", {"-Xptxas=-O4", "-Xptxas=--minnctapersm=2"}},
    {"maxtpb=256", {"-Xptxas=-O4", "-Xptxas=--maxntid=256"}},
    {"override=1", {"-Xptxas=-O4", "-Xptxas=--override-directive-values"}},
    {"split=4", {"-Xptxas=-O4", "-Xptxas=--split-compile=4"}},
    {"split=0", {"-Xptxas=-O4", "-Xptxas=--split-compile=0"}},
    {"maxrreg=64;opt=3;lineinfo=1;dlcm=cg", {"-maxrregcount=64", "-Xptxas=-O3", "-lineinfo", "-Xptxas=-dlcm=cg"}},
};

}  // namespace

TEST_CASE("compile option mapping: all defaults pass the driver's default level 4 to ptxas and nothing else") {
  CHECK(options_for("") == Options{"-Xptxas=-O4"});
}

TEST_CASE("compile option mapping: each option maps to its nvJitLink or ptxas flag") {
  for (const Case& c : k_cases) {
    INFO(c.text);
    CHECK(options_for(c.text) == c.expected);
  }
}

TEST_CASE("compile option mapping: every mapped option set is accepted and compiled by the real nvJitLink") {
  CHECK(link_with(options_for("")) == NVJITLINK_SUCCESS);
  for (const Case& c : k_cases) {
    INFO(c.text);
    CHECK(link_with(options_for(c.text)) == NVJITLINK_SUCCESS);
  }
}

TEST_CASE("compile option mapping: options without a faithful nvJitLink equivalent are refused by name") {
  const std::vector<std::pair<const char*, const char*>> refused = {{"tpb=128", "tpb=128"},
                                                                    {"fast=1", "fast=1"},
                                                                    {"lto=1", "lto=1"},
                                                                    {"g=1", "g=1 with opt=4"},
                                                                    {"g=1;opt=3", "g=1 with opt=3"}};
  for (const auto& [text, named] : refused) {
    INFO(text);
    const MappedOptions m = mapped(text);
    REQUIRE(m.refusal);
    CHECK(m.refusal->reason == RefusalReason::option);
    CHECK_THAT(m.refusal->message, Catch::Contains(named));
    CHECK(m.nvjitlink_options.empty());
  }
}

TEST_CASE("compile option mapping: a non-canonical option string is an invalid argument, not a refusal") {
  for (const char* text : {"opt=4", "", "maxrreg=0;tpb=0", "bogus=1"}) {
    INFO(text);
    const auto result = map_options(text);
    REQUIRE_FALSE(result);
    CHECK(result.error().code == jitcache::common::ErrorCode::invalid_argument);
  }
}
