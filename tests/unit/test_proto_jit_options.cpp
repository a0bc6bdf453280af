// The JIT option canonicaliser: CUjit_option arrays and the text form → the canonical option string.
#include <catch2/catch.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include <proto/jit_options.hpp>
#include <proto/key.hpp>

using namespace jitcache::proto;
using namespace jitcache::common;

namespace {

const std::string k_defaults =
    "maxrreg=0;tpb=0;opt=4;g=0;lineinfo=0;dlcm=none;fast=0;lto=0;ftz=0;prec_div=1;prec_sqrt=1;fma=1;pic=0;"
    "mincta=0;maxtpb=0;override=0;split=1";

// A CUjit_option array as a caller builds it: integers by value in the void* slot.
class OptionArray {
 public:
  OptionArray& add(JitOption option, std::uintptr_t value = 0) { return add_raw(static_cast<int>(option), value); }
  OptionArray& add_int(JitOption option, int value) {
    return add(option, static_cast<std::uintptr_t>(static_cast<unsigned>(value)));
  }
  OptionArray& add_pointer(JitOption option, void* pointer) {
    return add(option, reinterpret_cast<std::uintptr_t>(pointer));
  }
  OptionArray& add_raw(int option, std::uintptr_t value) {
    m_options.push_back(option);
    m_values.push_back(reinterpret_cast<void*>(value));
    return *this;
  }

  Result<CanonicalOptions> canonicalize() const {
    return canonicalize_options(static_cast<unsigned>(m_options.size()), m_options.data(), m_values.data());
  }

  std::string text() const {
    auto result = canonicalize();
    INFO((result.ok() ? std::string() : result.error().message));
    REQUIRE(result.ok());
    return result->text;
  }

  std::string unsupported_message() const {
    auto result = canonicalize();
    REQUIRE_FALSE(result.ok());
    CHECK(result.error().code == ErrorCode::unsupported);
    return result.error().message;
  }

 private:
  std::vector<int> m_options;
  std::vector<void*> m_values;
};

// Adds every log, time and verbosity option with live buffers, as a careful caller would.
struct LogBuffers {
  char info[256] = {};
  char error[256] = {};
  float wall_ms = 0;

  void add_to(OptionArray& array) {
    array.add_pointer(JitOption::info_log_buffer, info)
        .add(JitOption::info_log_buffer_size_bytes, sizeof info)
        .add_pointer(JitOption::error_log_buffer, error)
        .add(JitOption::error_log_buffer_size_bytes, sizeof error)
        .add_pointer(JitOption::wall_time, &wall_ms)
        .add_int(JitOption::log_verbose, 1);
  }
};

Digest256 key_id_with_options(const std::string& options) {
  KeyFields key;
  key.content = content_digest(as_bytes(".version 9.0\n.target sm_90\n"));
  key.arch = "sm_90";
  key.driver_api = 13000;
  key.driver_build = "580.159.04";
  key.options = options;
  REQUIRE(validate_key(key).ok());
  return key_id(key);
}

std::string text_error(std::string_view text) {
  auto result = canonicalize_option_text(text);
  REQUIRE_FALSE(result.ok());
  CHECK(result.error().code == ErrorCode::invalid_argument);
  return result.error().message;
}

}  // namespace

TEST_CASE("jit options: the default string lists every code-affecting option with its default") {
  CHECK(default_option_text() == k_defaults);
  CHECK(OptionArray().text() == k_defaults);
  CHECK(canonicalize_options(0, nullptr, nullptr)->text == k_defaults);
}

TEST_CASE("jit options: the same options in a different order give the same text and key") {
  const std::string forward = OptionArray()
                                  .add(JitOption::max_registers, 64)
                                  .add(JitOption::optimization_level, 2)
                                  .add_int(JitOption::generate_line_info, 1)
                                  .add(JitOption::cache_mode, 1)
                                  .text();
  const std::string backward = OptionArray()
                                   .add(JitOption::cache_mode, 1)
                                   .add_int(JitOption::generate_line_info, 1)
                                   .add(JitOption::optimization_level, 2)
                                   .add(JitOption::max_registers, 64)
                                   .text();
  CHECK(forward == backward);
  CHECK(forward ==
        "maxrreg=64;tpb=0;opt=2;g=0;lineinfo=1;dlcm=cg;fast=0;lto=0;ftz=0;prec_div=1;prec_sqrt=1;fma=1;"
        "pic=0;mincta=0;maxtpb=0;override=0;split=1");
  CHECK(key_id_with_options(forward) == key_id_with_options(backward));
}

TEST_CASE("jit options: explicit defaults give the same text and key as omitted ones") {
  OptionArray explicit_defaults;
  explicit_defaults.add(JitOption::optimization_level, 4)
      .add_int(JitOption::generate_debug_info, 0)
      .add_int(JitOption::generate_line_info, 0)
      .add(JitOption::cache_mode, 0)
      .add(JitOption::fast_compile, 0)
      .add_int(JitOption::lto, 0)
      .add_int(JitOption::ftz, 0)
      .add_int(JitOption::prec_div, 1)
      .add_int(JitOption::prec_sqrt, 1)
      .add_int(JitOption::fma, 1)
      .add_int(JitOption::position_independent_code, 0)
      .add(JitOption::min_cta_per_sm, 0)
      .add_int(JitOption::max_threads_per_block, 0)
      .add_int(JitOption::override_directive_values, 0)
      .add(JitOption::split_compile, 1);
  CHECK(explicit_defaults.text() == k_defaults);
  CHECK(key_id_with_options(explicit_defaults.text()) == key_id_with_options(OptionArray().text()));
}

TEST_CASE("jit options: log, wall-time and verbosity options do not change the text or key") {
  OptionArray plain;
  plain.add(JitOption::optimization_level, 1).add(JitOption::max_registers, 32);
  OptionArray logged;
  LogBuffers buffers;
  buffers.add_to(logged);
  logged.add(JitOption::optimization_level, 1).add(JitOption::max_registers, 32);
  CHECK(logged.text() == plain.text());
  CHECK(key_id_with_options(logged.text()) == key_id_with_options(plain.text()));
}

TEST_CASE("jit options: an explicit CU_JIT_TARGET_FROM_CUCONTEXT changes nothing") {
  auto with_context =
      OptionArray().add(JitOption::target_from_cucontext).add(JitOption::optimization_level, 3).canonicalize();
  auto without = OptionArray().add(JitOption::optimization_level, 3).canonicalize();
  REQUIRE(with_context.ok());
  REQUIRE(without.ok());
  CHECK(with_context->text == without->text);
  CHECK_FALSE(with_context->target_arch.has_value());
  CHECK(key_id_with_options(with_context->text) == key_id_with_options(without->text));
}

TEST_CASE("jit options: each code-affecting option at a non-default value changes the text") {
  struct Case {
    JitOption option;
    std::uintptr_t value;
    const char* expected;
  };
  for (const Case& c : {
           Case{JitOption::max_registers, 32, "maxrreg=32;"},
           Case{JitOption::threads_per_block, 128, "tpb=128;"},
           Case{JitOption::optimization_level, 0, "opt=0;"},
           Case{JitOption::generate_debug_info, 1, "g=1;"},
           Case{JitOption::generate_line_info, 1, "lineinfo=1;"},
           Case{JitOption::cache_mode, 1, "dlcm=cg;"},
           Case{JitOption::cache_mode, 2, "dlcm=ca;"},
           Case{JitOption::fast_compile, 1, "fast=1;"},
           Case{JitOption::lto, 1, "lto=1;"},
           Case{JitOption::ftz, 1, "ftz=1;"},
           Case{JitOption::prec_div, 0, "prec_div=0;"},
           Case{JitOption::prec_sqrt, 0, "prec_sqrt=0;"},
           Case{JitOption::fma, 0, "fma=0;"},
           Case{JitOption::position_independent_code, 1, "pic=1;"},
           Case{JitOption::min_cta_per_sm, 4, "mincta=4;"},
           Case{JitOption::max_threads_per_block, 256, "maxtpb=256;"},
           Case{JitOption::override_directive_values, 1, "override=1;"},
           Case{JitOption::split_compile, 0, ";split=0"},
           Case{JitOption::split_compile, 4, ";split=4"},
       }) {
    INFO("option " << static_cast<int>(c.option) << " = " << c.value);
    const std::string text = OptionArray().add(c.option, c.value).text();
    CHECK(text != k_defaults);
    CHECK_THAT(text, Catch::Contains(c.expected));
    CHECK(key_id_with_options(text) != key_id_with_options(k_defaults));
  }
}

TEST_CASE("jit options: a non-zero int boolean is keyed as 1, as the driver reads it") {
  const std::string one = OptionArray().add_int(JitOption::generate_debug_info, 1).text();
  CHECK(OptionArray().add_int(JitOption::generate_debug_info, 2).text() == one);
  CHECK(OptionArray().add_int(JitOption::generate_debug_info, -1).text() == one);
  CHECK_THAT(one, Catch::Contains(";g=1;"));
}

TEST_CASE("jit options: only the low 32 bits of a value slot count, as in the driver") {
  const std::uintptr_t high = std::uintptr_t{1} << 32;
  if constexpr (sizeof(std::uintptr_t) > 4) {
    CHECK(OptionArray().add(JitOption::max_registers, high | 32).text() ==
          OptionArray().add(JitOption::max_registers, 32).text());
  }
}

TEST_CASE("jit options: an unknown option number is unsupported and named") {
  for (int option : {35, 99, -1}) {
    INFO("option " << option);
    const std::string message = OptionArray().add_raw(option, 1).unsupported_message();
    CHECK_THAT(message, Catch::Contains("CUjit_option " + std::to_string(option)));
  }
}

TEST_CASE("jit options: a repeated option is unsupported") {
  const std::string message =
      OptionArray().add(JitOption::optimization_level, 4).add(JitOption::optimization_level, 4).unsupported_message();
  CHECK(message == "CU_JIT_OPTIMIZATION_LEVEL (7) is given more than once");
  OptionArray logs_twice;
  logs_twice.add(JitOption::log_verbose, 0).add(JitOption::log_verbose, 0);
  CHECK_THAT(logs_twice.unsupported_message(), Catch::Contains("CU_JIT_LOG_VERBOSE (12)"));
}

TEST_CASE("jit options: out-of-range values are unsupported and named") {
  struct Case {
    JitOption option;
    std::uintptr_t value;
    const char* expected;
  };
  for (const Case& c : {
           Case{JitOption::optimization_level, 5, "CU_JIT_OPTIMIZATION_LEVEL (7) = 5 is outside 0..4"},
           Case{JitOption::optimization_level, 7, "CU_JIT_OPTIMIZATION_LEVEL (7) = 7 is outside 0..4"},
           Case{JitOption::cache_mode, 3, "CU_JIT_CACHE_MODE (14) = 3 is outside 0..2"},
           Case{JitOption::fallback_strategy, 2, "CU_JIT_FALLBACK_STRATEGY (10) = 2"},
           Case{JitOption::max_registers, 0, "CU_JIT_MAX_REGISTERS (0) = 0 is refused by the driver"},
           Case{JitOption::threads_per_block, 0, "CU_JIT_THREADS_PER_BLOCK (1) = 0 is refused by the driver"},
           Case{JitOption::max_threads_per_block, static_cast<unsigned>(-1), "CU_JIT_MAX_THREADS_PER_BLOCK (32) = -1"},
           Case{JitOption::target, 0x30000 + 90, "CU_JIT_TARGET (9) = 196698 is not a CUjit_target"},
           Case{JitOption::target, 9, "CU_JIT_TARGET (9) = 9 is not a CUjit_target"},
           Case{JitOption::target, 0, "CU_JIT_TARGET (9) = 0 is not a CUjit_target"},
           Case{JitOption::target, 12345, "CU_JIT_TARGET (9) = 12345 is not a CUjit_target"},
           Case{JitOption::target, 91, "CU_JIT_TARGET (9) = 91 is not a CUjit_target"},
           Case{JitOption::target, 0x10000 + 80, "CU_JIT_TARGET (9) = 65616 is not a CUjit_target"},
           Case{JitOption::target, 0x20000 + 90, "CU_JIT_TARGET (9) = 131162 is not a CUjit_target"},
       }) {
    INFO("option " << static_cast<int>(c.option) << " = " << c.value);
    CHECK_THAT(OptionArray().add(c.option, c.value).unsupported_message(), Catch::StartsWith(c.expected));
  }
}

TEST_CASE("jit options: host relocations, legacy LTO symbol lists and NEW_SM3X_OPT make a load uncacheable") {
  const char* names[] = {"g_table"};
  void* addresses[] = {nullptr};
  OptionArray relocation;
  relocation.add_pointer(JitOption::global_symbol_names, names)
      .add_pointer(JitOption::global_symbol_addresses, addresses)
      .add(JitOption::global_symbol_count, 1);
  CHECK_THAT(relocation.unsupported_message(),
             Catch::StartsWith("CU_JIT_GLOBAL_SYMBOL_NAMES (17) relocates device symbols to host addresses"));

  struct Case {
    JitOption option;
    const char* expected;
  };
  for (const Case& c : {
           Case{JitOption::global_symbol_addresses, "CU_JIT_GLOBAL_SYMBOL_ADDRESSES (18)"},
           Case{JitOption::global_symbol_count, "CU_JIT_GLOBAL_SYMBOL_COUNT (19)"},
           Case{JitOption::referenced_kernel_names, "CU_JIT_REFERENCED_KERNEL_NAMES (25)"},
           Case{JitOption::referenced_kernel_count, "CU_JIT_REFERENCED_KERNEL_COUNT (26)"},
           Case{JitOption::referenced_variable_names, "CU_JIT_REFERENCED_VARIABLE_NAMES (27)"},
           Case{JitOption::referenced_variable_count, "CU_JIT_REFERENCED_VARIABLE_COUNT (28)"},
           Case{JitOption::optimize_unused_device_variables, "CU_JIT_OPTIMIZE_UNUSED_DEVICE_VARIABLES (29)"},
           Case{JitOption::new_sm3x_opt, "CU_JIT_NEW_SM3X_OPT (15)"},
       }) {
    INFO(c.expected);
    CHECK_THAT(OptionArray().add(c.option, 1).unsupported_message(), Catch::StartsWith(c.expected));
  }
}

TEST_CASE("jit options: CU_JIT_TARGET maps to sm_90, sm_90a and sm_100f and stays out of the text") {
  struct Case {
    std::uintptr_t target;
    const char* arch;
  };
  for (const Case& c : {Case{90, "sm_90"}, Case{0x10000 + 90, "sm_90a"}, Case{0x20000 + 100, "sm_100f"},
                        Case{121, "sm_121"}, Case{30, "sm_30"}}) {
    INFO(c.arch);
    auto result = OptionArray().add(JitOption::target, c.target).canonicalize();
    REQUIRE(result.ok());
    REQUIRE(result->target_arch.has_value());
    CHECK(*result->target_arch == c.arch);
    CHECK(is_valid_arch(*result->target_arch));
    CHECK(result->text == k_defaults);
  }
  CHECK_FALSE(OptionArray().canonicalize()->target_arch.has_value());
}

TEST_CASE("jit options: CU_JIT_TARGET with TARGET_FROM_CUCONTEXT or THREADS_PER_BLOCK is unsupported") {
  for (bool target_first : {true, false}) {
    OptionArray array;
    if (target_first) array.add(JitOption::target, 90);
    array.add(JitOption::target_from_cucontext);
    if (!target_first) array.add(JitOption::target, 90);
    CHECK_THAT(array.unsupported_message(), Catch::Contains("CU_JIT_TARGET_FROM_CUCONTEXT (8)"));
  }
  CHECK_THAT(OptionArray().add(JitOption::threads_per_block, 128).add(JitOption::target, 90).unsupported_message(),
             Catch::Contains("CU_JIT_THREADS_PER_BLOCK (1)"));
}

TEST_CASE("jit options: the fallback strategy is reported and stays out of the text") {
  for (unsigned strategy : {0u, 1u}) {
    auto result = OptionArray().add(JitOption::fallback_strategy, strategy).canonicalize();
    REQUIRE(result.ok());
    REQUIRE(result->fallback_strategy.has_value());
    CHECK(*result->fallback_strategy == strategy);
    CHECK(result->text == k_defaults);
  }
  CHECK_FALSE(OptionArray().canonicalize()->fallback_strategy.has_value());
}

TEST_CASE("jit options: null option or value arrays with a non-zero count are invalid arguments") {
  int options[] = {static_cast<int>(JitOption::optimization_level)};
  void* values[] = {reinterpret_cast<void*>(std::uintptr_t{3})};
  auto no_values = canonicalize_options(1, options, nullptr);
  REQUIRE_FALSE(no_values.ok());
  CHECK(no_values.error().code == ErrorCode::invalid_argument);
  auto no_options = canonicalize_options(1, nullptr, values);
  REQUIRE_FALSE(no_options.ok());
  CHECK(no_options.error().code == ErrorCode::invalid_argument);
  CHECK(canonicalize_options(1, options, values).ok());
}

TEST_CASE("jit options: option text in any order, with whitespace and explicit defaults, canonicalises") {
  CHECK(*canonicalize_option_text("") == k_defaults);
  CHECK(*canonicalize_option_text("  ") == k_defaults);
  CHECK(*canonicalize_option_text(k_defaults) == k_defaults);
  const std::string expected = OptionArray()
                                   .add(JitOption::max_registers, 64)
                                   .add(JitOption::optimization_level, 2)
                                   .add(JitOption::cache_mode, 2)
                                   .add(JitOption::split_compile, 0)
                                   .text();
  CHECK(*canonicalize_option_text("opt=2;maxrreg=64;dlcm=ca;split=0") == expected);
  CHECK(*canonicalize_option_text(" split = 0 ; dlcm=ca;\topt=2 ;maxrreg=64;fma=1;g=0;") == expected);
}

TEST_CASE("jit options: the canonical text is a fixed point of canonicalisation") {
  for (const char* text : {"", "opt=0", "g=1;lineinfo=1", "dlcm=cg;maxtpb=1024;mincta=2", "split=8;tpb=256"}) {
    INFO(text);
    auto once = canonicalize_option_text(text);
    REQUIRE(once.ok());
    auto twice = canonicalize_option_text(*once);
    REQUIRE(twice.ok());
    CHECK(*twice == *once);
  }
}

TEST_CASE("jit options: bad option text is refused with a message naming the key") {
  struct Case {
    const char* text;
    const char* expected;
  };
  for (const Case& c : {
           Case{"optimization=4", "unknown option \"optimization\""},
           Case{"opt=4;opt=4", "option \"opt\" is given more than once"},
           Case{"opt=3; opt =2", "option \"opt\" is given more than once"},
           Case{"opt=5", "option \"opt\": value \"5\" is outside 0..4"},
           Case{"opt=", "option \"opt\": value \"\""},
           Case{"opt=-1", "option \"opt\": value \"-1\""},
           Case{"opt=+1", "option \"opt\": value \"+1\""},
           Case{"opt=4x", "option \"opt\": value \"4x\""},
           Case{"maxrreg=4294967296", "option \"maxrreg\": value \"4294967296\""},
           Case{"g=2", "option \"g\": value \"2\" is outside 0..1"},
           Case{"dlcm=1", "option \"dlcm\": value \"1\" is not none, cg or ca"},
           Case{"dlcm=CG", "option \"dlcm\""},
           Case{"maxtpb=4294967295", "option \"maxtpb\": value \"4294967295\" is outside 0..2147483647"},
           Case{"opt", "\"opt\" is not key=value"},
           Case{"=4", "unknown option \"\""},
           Case{"target=90", "unknown option \"target\""},
       }) {
    INFO(c.text);
    CHECK_THAT(text_error(c.text), Catch::Contains(c.expected));
  }
}

TEST_CASE("jit options: text and array forms of the same options agree") {
  const std::string from_array = OptionArray()
                                     .add(JitOption::threads_per_block, 256)
                                     .add_int(JitOption::generate_debug_info, 1)
                                     .add_int(JitOption::ftz, 1)
                                     .add_int(JitOption::prec_div, 0)
                                     .add_int(JitOption::override_directive_values, 1)
                                     .add(JitOption::fast_compile, 2)
                                     .text();
  CHECK(*canonicalize_option_text("tpb=256;g=1;ftz=1;prec_div=0;override=1;fast=2") == from_array);
}

TEST_CASE("option text: a string without link= keeps its meaning (the all-defaults string is unchanged)") {
  CHECK(default_option_text() == k_defaults);
  auto canonical = canonicalize_option_text("opt=3");
  REQUIRE(canonical);
  CHECK(canonical->find("link") == std::string::npos);
  CHECK(link_flavor(*canonical) == LinkFlavor::none);
  auto refused = canonicalize_option_text("nvjitlink=-O3");
  REQUIRE_FALSE(refused);
  CHECK(refused.error().code == ErrorCode::invalid_argument);
}

TEST_CASE("option text: a cuLink session's string is link=cu followed by the canonical create options") {
  const std::string culink = cu_link_option_text(k_defaults);
  CHECK(culink == "link=cu;" + k_defaults);
  CHECK(link_flavor(culink) == LinkFlavor::cu_link);
  auto canonical = canonicalize_option_text(culink);
  REQUIRE(canonical);
  CHECK(*canonical == culink);
  auto reordered = canonicalize_option_text("opt=3; link = cu");
  REQUIRE(reordered);
  CHECK(*reordered == cu_link_option_text(*canonicalize_option_text("opt=3")));
  CHECK(*reordered != *canonicalize_option_text("opt=3"));
  CHECK(validate_key(KeyFields{k_key_schema_version, sha256(as_bytes("x")), "sm_90a", 13000, "580.159.04", culink}));
}

TEST_CASE("option text: an nvJitLink session's string is link=nvjitlink and its keyed options, nothing else") {
  const std::string text = nvjitlink_option_text({"-O3", "-Xptxas=-O4"});
  CHECK(text == "link=nvjitlink;nvjitlink=-O3 -Xptxas=-O4");
  CHECK(link_flavor(text) == LinkFlavor::nvjitlink);
  auto canonical = canonicalize_option_text(text);
  REQUIRE(canonical);
  CHECK(*canonical == text);
  auto options = nvjitlink_options_of(text);
  REQUIRE(options);
  CHECK(*options == std::vector<std::string>{"-O3", "-Xptxas=-O4"});
  CHECK(*canonicalize_option_text("link=nvjitlink") == "link=nvjitlink;nvjitlink=");
  CHECK(*canonicalize_option_text("nvjitlink= -O3   -g ;link=nvjitlink") == "link=nvjitlink;nvjitlink=-O3 -g");
  CHECK(validate_key(KeyFields{k_key_schema_version, sha256(as_bytes("x")), "sm_90", 13000, "nvjitlink-13.0-1", text}));
  CHECK_FALSE(nvjitlink_options_of(cu_link_option_text(k_defaults)));
}

TEST_CASE("option text: link strings that mix the two grammars or name another linker are refused") {
  for (const char* text : {"link=nvjitlink;opt=3", "link=cu;nvjitlink=-O3", "link=gcc", "link=cu;link=cu",
                           "link=nvjitlink;nvjitlink=-verbose", "link=nvjitlink;nvjitlink=-arch=sm_90", "link"}) {
    INFO(text);
    auto refused = canonicalize_option_text(text);
    REQUIRE_FALSE(refused);
    CHECK(refused.error().code == ErrorCode::invalid_argument);
  }
}

TEST_CASE("option arrays: is_keyed_jit_option is true exactly for the options of the canonical string") {
  CHECK(is_keyed_jit_option(static_cast<int>(JitOption::max_registers)));
  CHECK(is_keyed_jit_option(static_cast<int>(JitOption::split_compile)));
  CHECK_FALSE(is_keyed_jit_option(static_cast<int>(JitOption::info_log_buffer)));
  CHECK_FALSE(is_keyed_jit_option(static_cast<int>(JitOption::target)));
  CHECK_FALSE(is_keyed_jit_option(static_cast<int>(JitOption::global_symbol_names)));
  CHECK_FALSE(is_keyed_jit_option(-1));
  CHECK_FALSE(is_keyed_jit_option(35));
}
