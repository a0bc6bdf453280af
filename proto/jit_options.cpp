#include <proto/jit_options.hpp>

#include <algorithm>
#include <array>
#include <bitset>
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>

#include <common/result.hpp>
#include <proto/key.hpp>
#include <proto/nvjitlink_options.hpp>

// Evidence for the choices below (docs/cache-key.md "How the options were chosen"): cuda.h 13.0 and a
// probe on an H200 with driver 580.159.04 that compiled one PTX through cuModuleLoadDataEx and cuLink*
// with each option at several values and compared the SASS.

namespace jitcache::proto {

namespace {

// How an option's value is read from its void* slot, checked, and spelled in the text.
enum class ValueKind {
  positive_u32,      // unsigned; the driver fails on an explicit 0, so 0 in the text means "not passed"
  any_u32,           // unsigned, keyed by exact value
  bounded_u32,       // unsigned, 0 ..= max
  cache_mode,        // CUjit_cacheMode 0 ..= 2, spelled none|cg|ca
  boolean_int,       // int; any non-zero value means 1
  non_negative_int,  // int, 0 ..= INT_MAX
};

// One option that is part of the canonical string.
struct KeyedOption {
  JitOption option;
  std::string_view key;
  ValueKind kind;
  std::uint32_t default_value;
  std::uint32_t max_value;  // bounded_u32 and cache_mode only
};

// The canonical order is this array's order: ascending CUjit_option number.
constexpr std::array k_keyed_options = {
    KeyedOption{JitOption::max_registers, "maxrreg", ValueKind::positive_u32, 0, 0},
    KeyedOption{JitOption::threads_per_block, "tpb", ValueKind::positive_u32, 0, 0},
    KeyedOption{JitOption::optimization_level, "opt", ValueKind::bounded_u32, 4, 4},
    KeyedOption{JitOption::generate_debug_info, "g", ValueKind::boolean_int, 0, 0},
    KeyedOption{JitOption::generate_line_info, "lineinfo", ValueKind::boolean_int, 0, 0},
    KeyedOption{JitOption::cache_mode, "dlcm", ValueKind::cache_mode, 0, 2},
    KeyedOption{JitOption::fast_compile, "fast", ValueKind::any_u32, 0, 0},
    KeyedOption{JitOption::lto, "lto", ValueKind::boolean_int, 0, 0},
    KeyedOption{JitOption::ftz, "ftz", ValueKind::boolean_int, 0, 0},
    KeyedOption{JitOption::prec_div, "prec_div", ValueKind::boolean_int, 1, 0},
    KeyedOption{JitOption::prec_sqrt, "prec_sqrt", ValueKind::boolean_int, 1, 0},
    KeyedOption{JitOption::fma, "fma", ValueKind::boolean_int, 1, 0},
    KeyedOption{JitOption::position_independent_code, "pic", ValueKind::boolean_int, 0, 0},
    KeyedOption{JitOption::min_cta_per_sm, "mincta", ValueKind::any_u32, 0, 0},
    KeyedOption{JitOption::max_threads_per_block, "maxtpb", ValueKind::non_negative_int, 0, 0},
    KeyedOption{JitOption::override_directive_values, "override", ValueKind::boolean_int, 0, 0},
    // Rationale: cuda.h says 1 is ignored, so 1, not 0, equals "not passed"; 0 means one thread per
    // CPU. The probe saw split compilation (0 and 4) change the SASS, so the value is keyed.
    KeyedOption{JitOption::split_compile, "split", ValueKind::any_u32, 1, 0},
};

constexpr std::array<std::string_view, 3> k_cache_mode_names = {"none", "cg", "ca"};

// The link-session keys of the text form (docs/cache-key.md "Link sessions"); written only when set,
// so every string without them keeps its meaning.
constexpr std::string_view k_link_key = "link";
constexpr std::string_view k_cu_link_value = "cu";
constexpr std::string_view k_nvjitlink_value = "nvjitlink";
constexpr std::string_view k_nvjitlink_key = "nvjitlink";

using OptionValues = std::array<std::uint32_t, k_keyed_options.size()>;

// What an option in a CUjit_option array does to the key.
enum class Disposition {
  keyed,         // in the canonical string (k_keyed_options)
  dropped,       // log, time or verbosity: no effect on the image
  from_context,  // CU_JIT_TARGET_FROM_CUCONTEXT: the default
  target,        // CU_JIT_TARGET: sets the arch
  fallback,      // CU_JIT_FALLBACK_STRATEGY: selects the fat-binary image
  uncacheable,   // the load is passed through to the driver
};

struct OptionInfo {
  std::string_view name;
  Disposition disposition;
  std::string_view why_uncacheable;
};

constexpr std::string_view k_host_relocation =
    "relocates device symbols to host addresses of this process, so the image is not reusable";
constexpr std::string_view k_lto_names = "belongs to a symbol list (legacy LTO) that the key cannot capture";

// Indexed by CUjit_option number (cuda.h:1152-1517); the cuda.h test checks the numbering.
constexpr std::array<OptionInfo, 35> k_option_info = {{
    {"CU_JIT_MAX_REGISTERS", Disposition::keyed, {}},
    {"CU_JIT_THREADS_PER_BLOCK", Disposition::keyed, {}},
    {"CU_JIT_WALL_TIME", Disposition::dropped, {}},
    {"CU_JIT_INFO_LOG_BUFFER", Disposition::dropped, {}},
    {"CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES", Disposition::dropped, {}},
    {"CU_JIT_ERROR_LOG_BUFFER", Disposition::dropped, {}},
    {"CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES", Disposition::dropped, {}},
    {"CU_JIT_OPTIMIZATION_LEVEL", Disposition::keyed, {}},
    {"CU_JIT_TARGET_FROM_CUCONTEXT", Disposition::from_context, {}},
    {"CU_JIT_TARGET", Disposition::target, {}},
    {"CU_JIT_FALLBACK_STRATEGY", Disposition::fallback, {}},
    {"CU_JIT_GENERATE_DEBUG_INFO", Disposition::keyed, {}},
    {"CU_JIT_LOG_VERBOSE", Disposition::dropped, {}},
    {"CU_JIT_GENERATE_LINE_INFO", Disposition::keyed, {}},
    {"CU_JIT_CACHE_MODE", Disposition::keyed, {}},
    // Rationale: deprecated, yet not inert: with value 1 the 580.159.04 driver failed the load with
    // CUDA_ERROR_INVALID_PTX, so ignoring it would turn a driver failure into a cache hit.
    {"CU_JIT_NEW_SM3X_OPT", Disposition::uncacheable,
     "is deprecated and makes the driver fail some loads (seen: CUDA_ERROR_INVALID_PTX on sm_90)"},
    {"CU_JIT_FAST_COMPILE", Disposition::keyed, {}},
    {"CU_JIT_GLOBAL_SYMBOL_NAMES", Disposition::uncacheable, k_host_relocation},
    {"CU_JIT_GLOBAL_SYMBOL_ADDRESSES", Disposition::uncacheable, k_host_relocation},
    {"CU_JIT_GLOBAL_SYMBOL_COUNT", Disposition::uncacheable, k_host_relocation},
    {"CU_JIT_LTO", Disposition::keyed, {}},
    {"CU_JIT_FTZ", Disposition::keyed, {}},
    {"CU_JIT_PREC_DIV", Disposition::keyed, {}},
    {"CU_JIT_PREC_SQRT", Disposition::keyed, {}},
    {"CU_JIT_FMA", Disposition::keyed, {}},
    {"CU_JIT_REFERENCED_KERNEL_NAMES", Disposition::uncacheable, k_lto_names},
    {"CU_JIT_REFERENCED_KERNEL_COUNT", Disposition::uncacheable, k_lto_names},
    {"CU_JIT_REFERENCED_VARIABLE_NAMES", Disposition::uncacheable, k_lto_names},
    {"CU_JIT_REFERENCED_VARIABLE_COUNT", Disposition::uncacheable, k_lto_names},
    {"CU_JIT_OPTIMIZE_UNUSED_DEVICE_VARIABLES", Disposition::uncacheable,
     "drops device variables that the host may still look up (legacy LTO); the key cannot tell which"},
    {"CU_JIT_POSITION_INDEPENDENT_CODE", Disposition::keyed, {}},
    {"CU_JIT_MIN_CTA_PER_SM", Disposition::keyed, {}},
    {"CU_JIT_MAX_THREADS_PER_BLOCK", Disposition::keyed, {}},
    {"CU_JIT_OVERRIDE_DIRECTIVE_VALUES", Disposition::keyed, {}},
    {"CU_JIT_SPLIT_COMPILE", Disposition::keyed, {}},
}};

// CUjit_target: 10*CC, plus one of these for the arch-specific and family variants (cuda.h:1520-1528).
constexpr std::uint32_t k_accelerated_target_base = 0x10000;
constexpr std::uint32_t k_family_target_base = 0x20000;
constexpr std::uint32_t k_target_number_mask = 0xFFFF;
// The CUjit_target values the driver accepts (cuda.h's CUjit_target_enum; 101 from CUDA 12.8-12.9).
// Rationale: any other number is refused by the driver (CUDA_ERROR_INVALID_VALUE); keyed as
// "sm_<number>" it would be a key the driver never JITs for, and a hit where the driver answers an
// error. Such a value makes the load uncacheable: the call is the driver's own (docs/cache-key.md).
constexpr std::uint32_t k_known_targets[] = {30, 32, 35, 37, 50, 52, 53,  60,  61,  62,  70,  72,
                                             75, 80, 86, 87, 89, 90, 100, 101, 103, 110, 120, 121};
constexpr std::uint32_t k_first_accelerated_target = 90;
constexpr std::uint32_t k_first_family_target = 100;

bool known_target(std::uint32_t number, std::uint32_t variant) {
  bool listed = false;
  for (const std::uint32_t known : k_known_targets) listed = listed || known == number;
  if (!listed) return false;
  if (variant == k_accelerated_target_base) return number >= k_first_accelerated_target;
  if (variant == k_family_target_base) return number >= k_first_family_target;
  return variant == 0;
}

common::Error unsupported(std::string message) {
  return common::make_error(common::ErrorCode::unsupported, std::move(message));
}
common::Error invalid(std::string message) {
  return common::make_error(common::ErrorCode::invalid_argument, std::move(message));
}

std::string option_label(int option) {
  return std::string(k_option_info[static_cast<std::size_t>(option)].name) + " (" + std::to_string(option) + ")";
}

// Rationale: integers travel by value in the void* slot; the driver reads the low 32 bits (the probe
// saw 0x1'00000020 behave as 32), so this does too.
std::uint32_t slot_u32(void* slot) { return static_cast<std::uint32_t>(reinterpret_cast<std::uintptr_t>(slot)); }
int slot_int(void* slot) { return static_cast<int>(slot_u32(slot)); }

std::size_t keyed_index(JitOption option) {
  for (std::size_t i = 0; i < k_keyed_options.size(); ++i) {
    if (k_keyed_options[i].option == option) return i;
  }
  return k_keyed_options.size();
}

OptionValues default_values() {
  OptionValues values{};
  for (std::size_t i = 0; i < k_keyed_options.size(); ++i) values[i] = k_keyed_options[i].default_value;
  return values;
}

std::string format_value(const KeyedOption& spec, std::uint32_t value) {
  if (spec.kind == ValueKind::cache_mode) return std::string(k_cache_mode_names[value]);
  return std::to_string(value);
}

std::string format_text(const OptionValues& values) {
  std::string text;
  for (std::size_t i = 0; i < k_keyed_options.size(); ++i) {
    if (i > 0) text.push_back(';');
    text += k_keyed_options[i].key;
    text.push_back('=');
    text += format_value(k_keyed_options[i], values[i]);
  }
  return text;
}

// Reads a keyed option's slot; an Error (unsupported) when the driver would reject the value or
// when its meaning is not known well enough to key on it.
common::Result<std::uint32_t> read_keyed_value(const KeyedOption& spec, int option, void* slot) {
  const std::uint32_t raw = slot_u32(slot);
  switch (spec.kind) {
    case ValueKind::positive_u32:
      // Rationale: the 580.159.04 driver returns CUDA_ERROR_INVALID_VALUE for MAX_REGISTERS 0 and
      // dies of SIGFPE for THREADS_PER_BLOCK 0; keying 0 as "not passed" would hide that.
      if (raw == 0) {
        return unsupported(option_label(option) + " = 0 is refused by the driver; only values >= 1 are cached");
      }
      return raw;
    case ValueKind::any_u32: return raw;
    case ValueKind::bounded_u32:
    case ValueKind::cache_mode:
      if (raw > spec.max_value) {
        return unsupported(option_label(option) + " = " + std::to_string(raw) + " is outside 0.." +
                           std::to_string(spec.max_value) + " (cuda.h)");
      }
      return raw;
    case ValueKind::boolean_int:
      // Rationale: the driver reads these as C truth values (the probe saw 2 and -1 compile exactly
      // like 1 for -g, -lineinfo, -pic and override), so non-zero is keyed as 1.
      return slot_int(slot) != 0 ? 1u : 0u;
    case ValueKind::non_negative_int:
      // Rationale: the driver dies of SIGFPE for MAX_THREADS_PER_BLOCK -1 (probe).
      if (slot_int(slot) < 0) {
        return unsupported(option_label(option) + " = " + std::to_string(slot_int(slot)) + " is negative");
      }
      return raw;
  }
  return raw;
}

common::Result<std::string> target_arch(std::uint32_t value) {
  const std::uint32_t number = value & k_target_number_mask;
  const std::uint32_t variant = value & ~k_target_number_mask;
  std::string arch = "sm_" + std::to_string(number);
  if (variant == k_accelerated_target_base) {
    arch.push_back('a');
  } else if (variant == k_family_target_base) {
    arch.push_back('f');
  } else if (variant != 0) {
    arch.clear();
  }
  if (!is_valid_arch(arch) || !known_target(number, variant)) {
    return unsupported(option_label(static_cast<int>(JitOption::target)) + " = " + std::to_string(value) +
                       " is not a CUjit_target (10*CC, optionally + 0x10000 or 0x20000)");
  }
  return arch;
}

// The array walk's state besides the keyed values.
struct ArrayScan {
  OptionValues values = default_values();
  std::bitset<k_option_info.size()> seen;
  CanonicalOptions result;
};

common::Result<void> scan_option(ArrayScan& scan, int option, void* slot) {
  if (option < 0 || static_cast<std::size_t>(option) >= k_option_info.size()) {
    return unsupported("CUjit_option " + std::to_string(option) +
                       " is not known to this build (cuda.h 13.0 has 0..34)");
  }
  if (scan.seen.test(static_cast<std::size_t>(option))) {
    // Rationale: the driver lets the last occurrence win (probe); a caller that repeats an option
    // most likely made a mistake, and pass-through keeps the driver's exact behaviour for it.
    return unsupported(option_label(option) + " is given more than once");
  }
  scan.seen.set(static_cast<std::size_t>(option));

  const OptionInfo& info = k_option_info[static_cast<std::size_t>(option)];
  switch (info.disposition) {
    case Disposition::keyed: {
      const std::size_t index = keyed_index(static_cast<JitOption>(option));
      auto value = read_keyed_value(k_keyed_options[index], option, slot);
      JITCACHE_TRY(value);
      scan.values[index] = *value;
      return {};
    }
    case Disposition::dropped:
    case Disposition::from_context: return {};
    case Disposition::target: {
      auto arch = target_arch(slot_u32(slot));
      JITCACHE_TRY(arch);
      scan.result.target_arch = std::move(*arch);
      return {};
    }
    case Disposition::fallback: {
      const std::uint32_t strategy = slot_u32(slot);
      if (strategy > 1) {
        return unsupported(option_label(option) + " = " + std::to_string(strategy) +
                           " is neither CU_PREFER_PTX (0) nor CU_PREFER_BINARY (1)");
      }
      scan.result.fallback_strategy = strategy;
      return {};
    }
    case Disposition::uncacheable: return unsupported(option_label(option) + " " + std::string(info.why_uncacheable));
  }
  return {};
}

// Combinations cuda.h forbids, or whose meaning depends on the driver's precedence rules.
common::Result<void> check_combinations(const ArrayScan& scan) {
  const auto has = [&](JitOption option) { return scan.seen.test(static_cast<std::size_t>(option)); };
  if (has(JitOption::target) && has(JitOption::target_from_cucontext)) {
    return unsupported(
        "CU_JIT_TARGET (9) together with CU_JIT_TARGET_FROM_CUCONTEXT (8): which target wins is "
        "the driver's choice");
  }
  if (has(JitOption::target) && has(JitOption::threads_per_block)) {
    return unsupported("CU_JIT_TARGET (9) together with CU_JIT_THREADS_PER_BLOCK (1) is not allowed (cuda.h)");
  }
  return {};
}

std::string_view trim(std::string_view s) {
  constexpr std::string_view k_space = " \t\r\n";
  const std::size_t first = s.find_first_not_of(k_space);
  if (first == std::string_view::npos) return {};
  return s.substr(first, s.find_last_not_of(k_space) - first + 1);
}

// Option text comes from a command line or a config file; a message quotes at most this much of it.
constexpr std::size_t k_max_quoted_length = 64;

std::string quoted(std::string_view s) {
  if (s.size() <= k_max_quoted_length) return "\"" + std::string(s) + "\"";
  return "\"" + std::string(s.substr(0, k_max_quoted_length)) + "\"...";
}

common::Result<std::uint32_t> parse_decimal(std::string_view key, std::string_view text) {
  std::uint32_t value = 0;
  const bool digits_only = !text.empty() && text.find_first_not_of("0123456789") == std::string_view::npos;
  const auto parsed = std::from_chars(text.data(), text.data() + text.size(), value);
  if (!digits_only || parsed.ec != std::errc()) {
    return invalid("option " + quoted(key) + ": value " + quoted(text) + " is not a number from 0 to " +
                   std::to_string(std::numeric_limits<std::uint32_t>::max()));
  }
  return value;
}

common::Result<std::uint32_t> parse_text_value(const KeyedOption& spec, std::string_view text) {
  if (spec.kind == ValueKind::cache_mode) {
    for (std::size_t i = 0; i < k_cache_mode_names.size(); ++i) {
      if (text == k_cache_mode_names[i]) return static_cast<std::uint32_t>(i);
    }
    return invalid("option \"dlcm\": value " + quoted(text) + " is not none, cg or ca");
  }
  auto value = parse_decimal(spec.key, text);
  if (!value) return value;
  std::uint32_t max = std::numeric_limits<std::uint32_t>::max();
  if (spec.kind == ValueKind::bounded_u32) max = spec.max_value;
  if (spec.kind == ValueKind::boolean_int) max = 1;
  if (spec.kind == ValueKind::non_negative_int) max = static_cast<std::uint32_t>(std::numeric_limits<int>::max());
  if (*value > max) {
    return invalid("option " + quoted(spec.key) + ": value " + quoted(text) + " is outside 0.." + std::to_string(max));
  }
  return value;
}

common::Result<void> parse_pair(std::string_view pair, OptionValues& values,
                                std::bitset<k_keyed_options.size()>& seen) {
  const std::size_t equals = pair.find('=');
  if (equals == std::string_view::npos) return invalid(quoted(pair) + " is not key=value");
  const std::string_view key = trim(pair.substr(0, equals));
  const std::string_view value_text = trim(pair.substr(equals + 1));
  std::size_t index = 0;
  while (index < k_keyed_options.size() && k_keyed_options[index].key != key) ++index;
  if (index == k_keyed_options.size()) return invalid("unknown option " + quoted(key));
  if (seen.test(index)) return invalid("option " + quoted(key) + " is given more than once");
  seen.set(index);
  auto value = parse_text_value(k_keyed_options[index], value_text);
  JITCACHE_TRY(value);
  values[index] = *value;
  return {};
}

}  // namespace

common::Result<CanonicalOptions> canonicalize_options(unsigned count, const int* options, void* const* values) {
  if (count > 0 && (options == nullptr || values == nullptr)) {
    return invalid(std::to_string(count) + " JIT options given but the option or value array is null");
  }
  ArrayScan scan;
  for (unsigned i = 0; i < count; ++i) {
    JITCACHE_TRY(scan_option(scan, options[i], values[i]));
  }
  JITCACHE_TRY(check_combinations(scan));
  scan.result.text = format_text(scan.values);
  return std::move(scan.result);
}

common::Result<std::string> canonicalize_option_text(std::string_view text) {
  // An NVRTC compile's marker stands alone (jit_options.hpp k_nvrtc_option_text).
  if (trim(text) == k_nvrtc_option_text) return std::string(k_nvrtc_option_text);
  OptionValues values = default_values();
  std::bitset<k_keyed_options.size()> seen;
  std::optional<std::string_view> link;
  std::optional<std::string_view> nvjitlink;
  bool any_jit_key = false;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t end = std::min(text.find(';', start), text.size());
    const std::string_view pair = trim(text.substr(start, end - start));
    start = end + 1;
    // Rationale: empty pieces ("", a trailing ';') carry nothing and are harmless to accept.
    if (pair.empty()) continue;
    const std::size_t equals = pair.find('=');
    const std::string_view key = equals == std::string_view::npos ? pair : trim(pair.substr(0, equals));
    if (key == k_link_key || key == k_nvjitlink_key) {
      if (equals == std::string_view::npos) return invalid(quoted(pair) + " is not key=value");
      std::optional<std::string_view>& slot = key == k_link_key ? link : nvjitlink;
      if (slot) return invalid("option " + quoted(key) + " is given more than once");
      slot = trim(pair.substr(equals + 1));
      continue;
    }
    JITCACHE_TRY(parse_pair(pair, values, seen));
    any_jit_key = true;
  }
  if (!link) {
    if (nvjitlink) return invalid("option \"nvjitlink\" belongs to link=nvjitlink only");
    return format_text(values);
  }
  if (*link == k_cu_link_value) {
    if (nvjitlink) return invalid("option \"nvjitlink\" belongs to link=nvjitlink, not link=cu");
    return cu_link_option_text(format_text(values));
  }
  if (*link == k_nvjitlink_value) {
    if (any_jit_key) return invalid("with link=nvjitlink only the option \"nvjitlink\" may follow");
    auto keyed = parse_nvjitlink_option_list(nvjitlink.value_or(std::string_view{}));
    JITCACHE_TRY(keyed);
    std::string canonical = nvjitlink_option_text(*keyed);
    // nvJitLink's option list is the caller's own words: a long one has no key to go under.
    if (canonical.size() > k_max_options_length) {
      return invalid("the canonical nvjitlink options are " + std::to_string(canonical.size()) +
                     " bytes, more than a key's " + std::to_string(k_max_options_length));
    }
    return canonical;
  }
  return invalid("option \"link\": value " + quoted(*link) + " is not cu or nvjitlink");
}

const std::string& default_option_text() {
  static const std::string k_text = format_text(default_values());
  return k_text;
}

bool is_keyed_jit_option(int option) {
  if (option < 0 || static_cast<std::size_t>(option) >= k_option_info.size()) return false;
  return k_option_info[static_cast<std::size_t>(option)].disposition == Disposition::keyed;
}

std::string cu_link_option_text(std::string_view canonical_create_options) {
  return std::string(k_link_key) + "=" + std::string(k_cu_link_value) + ";" + std::string(canonical_create_options);
}

std::string nvjitlink_option_text(const std::vector<std::string>& keyed) {
  return std::string(k_link_key) + "=" + std::string(k_nvjitlink_value) + ";" + std::string(k_nvjitlink_key) + "=" +
         join_nvjitlink_options(keyed);
}

LinkFlavor link_flavor(std::string_view canonical) {
  const std::string prefix = std::string(k_link_key) + "=";
  if (!canonical.starts_with(prefix)) return LinkFlavor::none;
  const std::string_view rest = canonical.substr(prefix.size());
  if (rest.starts_with(std::string(k_cu_link_value) + ";")) return LinkFlavor::cu_link;
  if (rest.starts_with(std::string(k_nvjitlink_value) + ";")) return LinkFlavor::nvjitlink;
  return LinkFlavor::none;
}

common::Result<std::vector<std::string>> nvjitlink_options_of(std::string_view canonical) {
  const std::string prefix = nvjitlink_option_text({});
  if (link_flavor(canonical) != LinkFlavor::nvjitlink || !canonical.starts_with(prefix)) {
    return invalid("options " + quoted(canonical) + " are not an nvJitLink link's");
  }
  return parse_nvjitlink_option_list(canonical.substr(prefix.size()));
}

}  // namespace jitcache::proto
