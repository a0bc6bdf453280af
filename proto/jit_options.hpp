// The option canonicaliser: CUjit_option arrays → the canonical option string of the cache key.
//
// Every option that changes generated code appears in a fixed order with its default made explicit,
// so equivalent arrays (any order, defaults passed or omitted) give the same string. Log, wall-time
// and verbosity options are dropped (they do not change code; docs/driver-facts.md §0.4). An option
// the canonicaliser does not know, a value out of range, or a repeated option makes the load
// uncacheable rather than silently mis-keyed (docs/cache-key.md "What makes a load uncacheable").
//
// proto/ does not include cuda.h: JitOption mirrors CUjit_option by value (cuda.h:1152-1517), and a
// unit test compiled against cuda.h checks that every value matches. Thread safety: free functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <common/result.hpp>

namespace jitcache::proto {

// Numbered as CUjit_option; never renumber.
enum class JitOption : int {
  max_registers = 0,
  threads_per_block = 1,
  wall_time = 2,
  info_log_buffer = 3,
  info_log_buffer_size_bytes = 4,
  error_log_buffer = 5,
  error_log_buffer_size_bytes = 6,
  optimization_level = 7,
  target_from_cucontext = 8,
  target = 9,
  fallback_strategy = 10,
  generate_debug_info = 11,
  log_verbose = 12,
  generate_line_info = 13,
  cache_mode = 14,
  new_sm3x_opt = 15,
  fast_compile = 16,
  global_symbol_names = 17,
  global_symbol_addresses = 18,
  global_symbol_count = 19,
  lto = 20,
  ftz = 21,
  prec_div = 22,
  prec_sqrt = 23,
  fma = 24,
  referenced_kernel_names = 25,
  referenced_kernel_count = 26,
  referenced_variable_names = 27,
  referenced_variable_count = 28,
  optimize_unused_device_variables = 29,
  position_independent_code = 30,
  min_cta_per_sm = 31,
  max_threads_per_block = 32,
  override_directive_values = 33,
  split_compile = 34,
};

// What canonicalisation found besides the string. `target_arch` is set when the array carries
// CU_JIT_TARGET: the caller must key on that arch instead of the device's. `fallback_strategy`
// selects an image inside a fat binary; it is not part of the string because the selected bytes
// (the content digest) already reflect it.
struct CanonicalOptions {
  std::string text;
  std::optional<std::string> target_arch;
  std::optional<unsigned> fallback_strategy;
};

// `values[i]` is the option_values slot exactly as the driver API receives it (integers by value in
// the pointer). An Error with ErrorCode::unsupported means "uncacheable: pass through to the driver";
// its message names the option (CU_JIT_* name and number) and why. Null arrays with count > 0 are
// ErrorCode::invalid_argument. The keys, defaults and rules are tabled in docs/cache-key.md.
common::Result<CanonicalOptions> canonicalize_options(unsigned count, const int* options, void* const* values);

// Canonicalises the text form used by the CLI and config: "key=value" pairs separated by ';' in any
// order, defaults omitted or explicit ("" is all defaults), whitespace around keys and values
// ignored. Unknown keys, repeated keys and bad values are ErrorCode::invalid_argument naming the key.
common::Result<std::string> canonicalize_option_text(std::string_view text);

// The canonical string with every option at its default.
const std::string& default_option_text();

// True for a CUjit_option that is part of the canonical string (k_keyed_options in the .cpp); false
// for log, target, fallback, uncacheable and unknown options.
bool is_keyed_jit_option(int option);

// Link sessions (docs/cache-key.md "Link sessions"). A cuLink* session's option string is "link=cu;"
// followed by the canonical string of its cuLinkCreate options; an nvJitLink session's is
// "link=nvjitlink;nvjitlink=" followed by its keyed options joined by one space
// (nvjitlink_options.hpp). The marker keeps a link from ever sharing a key with a module load of
// the same PTX: a link's output is relocatable (-rdc) code, other bytes. A string without `link`
// means exactly what it meant before link sessions existed.
enum class LinkFlavor { none, cu_link, nvjitlink };
// `canonical_create_options` is a canonical option string without `link` (CanonicalOptions::text).
std::string cu_link_option_text(std::string_view canonical_create_options);
std::string nvjitlink_option_text(const std::vector<std::string>& keyed);
// The flavor a canonical option string names (anything not starting with "link=" is none).
LinkFlavor link_flavor(std::string_view canonical);
// The keyed nvJitLink options of a canonical "link=nvjitlink;nvjitlink=..." string;
// ErrorCode::invalid_argument for any other string.
common::Result<std::vector<std::string>> nvjitlink_options_of(std::string_view canonical);

// An NVRTC compile's option string (docs/cache-key.md "NVRTC compiles"): exactly "compiler=nvrtc".
// Its key's content digest covers everything else (nvrtc_key.hpp); the marker keeps an NVRTC result
// (not a cubin: proto/nvrtc_result.hpp) from ever sharing a key with a module load or a link, and
// tells the daemon which image check a PUT of it gets.
inline constexpr std::string_view k_nvrtc_option_text = "compiler=nvrtc";
inline bool is_nvrtc_option_text(std::string_view canonical) { return canonical == k_nvrtc_option_text; }

}  // namespace jitcache::proto
