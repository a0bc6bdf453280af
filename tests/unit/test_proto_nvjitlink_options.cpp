// The nvJitLink option canonicaliser (proto/nvjitlink_options.hpp): what is keyed, what is only
// honoured, and what makes a link uncacheable.
#include <catch2/catch.hpp>

#include <string>
#include <string_view>
#include <vector>

#include <proto/jit_options.hpp>
#include <proto/nvjitlink_options.hpp>

using namespace jitcache::proto;
using namespace jitcache::common;

namespace {

Result<NvJitLinkOptions> canonical(std::vector<std::string_view> options) {
  return canonicalize_nvjitlink_options(options);
}

std::string refusal(std::vector<std::string_view> options) {
  auto result = canonical(std::move(options));
  REQUIRE_FALSE(result);
  CHECK(result.error().code == ErrorCode::unsupported);
  return result.error().message;
}

}  // namespace

TEST_CASE("nvJitLink options: -arch is the arch, code options are kept verbatim in order, logs are dropped") {
  auto result = canonical(
      {"-verbose", "-arch=sm_90a", "-O3", "-Xptxas=-O4", "-time", "-maxrregcount=32", "-lineinfo", "-no-cache"});
  REQUIRE(result);
  CHECK(result->arch == "sm_90a");
  CHECK(result->keyed == std::vector<std::string>{"-O3", "-Xptxas=-O4", "-maxrregcount=32", "-lineinfo"});
  CHECK(result->asks_for_log);
  auto quiet = canonical({"-arch=sm_80", "-no-cache"});
  REQUIRE(quiet);
  CHECK_FALSE(quiet->asks_for_log);
  CHECK(quiet->keyed.empty());
}

TEST_CASE("nvJitLink options: every documented code option is keyed") {
  for (std::string_view option :
       {"-g", "-lineinfo", "-lto", "-optimize-unused-variables", "-device-stack-protector", "-O0", "-maxrregcount=64",
        "-ftz=true", "-prec-div=false", "-prec-sqrt=false", "-fma=false", "-kernels-used=k", "-variables-used=v",
        "-Xptxas=--maxntid=128", "-Xnvvm=-opt=0", "-split-compile=4", "-split-compile-extended=2",
        "-jump-table-density=50"}) {
    INFO(option);
    auto result = canonical({"-arch=sm_90", option});
    REQUIRE(result);
    CHECK(result->keyed == std::vector<std::string>{std::string(option)});
  }
}

TEST_CASE("nvJitLink options: -ptx, unknown options and unspellable ones make the link uncacheable") {
  CHECK_THAT(refusal({"-arch=sm_90", "-lto", "-ptx"}), Catch::Contains("\"-ptx\""));
  CHECK_THAT(refusal({"-arch=sm_90", "-Ofast"}), Catch::Contains("not an nvJitLink option"));
  CHECK_THAT(refusal({"-arch=sm_90", "-bogus"}), Catch::Contains("\"-bogus\""));
  CHECK_THAT(refusal({"-arch=sm_90", "-Xptxas=-O3 -v"}), Catch::Contains("space"));
  CHECK_THAT(refusal({"-arch=sm_90", "-Xptxas=a;b"}), Catch::Contains("';'"));
  CHECK_THAT(refusal({"-arch=sm_90", ""}), Catch::Contains("empty"));
  CHECK_THAT(refusal({"-arch=sm_90", "-maxrregcount="}), Catch::Contains("not an nvJitLink option"));
}

TEST_CASE("nvJitLink options: a missing, repeated or non-GPU -arch makes the link uncacheable") {
  CHECK_THAT(refusal({"-O3"}), Catch::Contains("no -arch"));
  CHECK_THAT(refusal({"-arch=sm_90", "-arch=sm_80"}), Catch::Contains("more than once"));
  CHECK_THAT(refusal({"-arch=compute_90"}), Catch::Contains("compute_"));
  CHECK_THAT(refusal({"-arch=lto_90"}), Catch::Contains("sm_XY"));
}

TEST_CASE("nvJitLink options: the text form joins with one space and reads back only keyed options") {
  CHECK(join_nvjitlink_options({"-O3", "-g"}) == "-O3 -g");
  CHECK(join_nvjitlink_options({}).empty());
  auto parsed = parse_nvjitlink_option_list("  -O3 \t -g ");
  REQUIRE(parsed);
  CHECK(*parsed == std::vector<std::string>{"-O3", "-g"});
  auto empty = parse_nvjitlink_option_list("");
  REQUIRE(empty);
  CHECK(empty->empty());
  for (std::string_view text : {"-verbose", "-arch=sm_90", "-ptx", "-O3 -bogus"}) {
    INFO(text);
    auto refused = parse_nvjitlink_option_list(text);
    REQUIRE_FALSE(refused);
    CHECK(refused.error().code == ErrorCode::invalid_argument);
  }
}

TEST_CASE("nvJitLink options: a text option list whose canonical form would not fit a key's options field is refused") {
  // Found by fuzz_option_text: the list is the caller's own words, and 200 of them outgrow the key.
  std::string text = "link=nvjitlink;nvjitlink=";
  for (int i = 0; i < 200; ++i) text += "-maxrregcount=32 ";
  auto canonical = jitcache::proto::canonicalize_option_text(text);
  REQUIRE_FALSE(canonical);
  CHECK(canonical.error().code == jitcache::common::ErrorCode::invalid_argument);
  CHECK_THAT(canonical.error().message, Catch::Contains("more than a key's 1024"));
}
