#include <proto/nvrtc_options.hpp>

#include <array>
#include <cctype>

namespace jitcache::proto {

namespace {

using Class = NvrtcOptionClass;

// One option: its spelling before any '=', and its class. Rationale: the table lists what NVRTC
// 13.0's user guide documents ("Supported Compile Options"); an option NVRTC adds later is unknown
// here and passes through until it is classified, so a new option can never go unkeyed.
struct Spelling {
  std::string_view name;
  Class kind;
};

constexpr std::array k_spellings{
    // Targets and code generation.
    Spelling{"--gpu-architecture", Class::keyed},
    Spelling{"-arch", Class::keyed},
    Spelling{"--device-c", Class::keyed},
    Spelling{"-dc", Class::keyed},
    Spelling{"--device-w", Class::keyed},
    Spelling{"-dw", Class::keyed},
    Spelling{"--relocatable-device-code", Class::keyed},
    Spelling{"-rdc", Class::keyed},
    Spelling{"--extensible-whole-program", Class::keyed},
    Spelling{"-ewp", Class::keyed},
    Spelling{"--device-debug", Class::keyed},
    Spelling{"-G", Class::keyed},
    Spelling{"--generate-line-info", Class::keyed},
    Spelling{"-lineinfo", Class::keyed},
    Spelling{"--dopt", Class::keyed},
    Spelling{"-dopt", Class::keyed},
    Spelling{"--ptxas-options", Class::keyed},
    Spelling{"-Xptxas", Class::keyed},
    Spelling{"--maxrregcount", Class::keyed},
    Spelling{"-maxrregcount", Class::keyed},
    Spelling{"--ftz", Class::keyed},
    Spelling{"-ftz", Class::keyed},
    Spelling{"--prec-sqrt", Class::keyed},
    Spelling{"-prec-sqrt", Class::keyed},
    Spelling{"--prec-div", Class::keyed},
    Spelling{"-prec-div", Class::keyed},
    Spelling{"--fmad", Class::keyed},
    Spelling{"-fmad", Class::keyed},
    Spelling{"--use_fast_math", Class::keyed},
    Spelling{"-use_fast_math", Class::keyed},
    Spelling{"--extra-device-vectorization", Class::keyed},
    Spelling{"-extra-device-vectorization", Class::keyed},
    Spelling{"--modify-stack-limit", Class::keyed},
    Spelling{"-modify-stack-limit", Class::keyed},
    Spelling{"--dlink-time-opt", Class::keyed},
    Spelling{"-dlto", Class::keyed},
    Spelling{"--gen-opt-lto", Class::keyed},
    Spelling{"-gen-opt-lto", Class::keyed},
    Spelling{"--optix-ir", Class::keyed},
    Spelling{"-optix-ir", Class::keyed},
    Spelling{"--jump-table-density", Class::keyed},
    Spelling{"-jtd", Class::keyed},
    Spelling{"--device-stack-protector", Class::keyed},
    Spelling{"-device-stack-protector", Class::keyed},
    Spelling{"--Ofast-compile", Class::keyed},
    Spelling{"-Ofc", Class::keyed},
    Spelling{"--frandom-seed", Class::keyed},
    Spelling{"-frandom-seed", Class::keyed},
    Spelling{"--minimal", Class::keyed},
    Spelling{"-minimal", Class::keyed},
    Spelling{"--fdevice-syntax-only", Class::keyed},
    Spelling{"-fdevice-syntax-only", Class::keyed},
    // Preprocessing.
    Spelling{"--define-macro", Class::keyed},
    Spelling{"--undefine-macro", Class::keyed},
    Spelling{"--include-path", Class::include_path},
    Spelling{"--pre-include", Class::pre_include},
    Spelling{"-include", Class::pre_include},
    Spelling{"--no-source-include", Class::keyed},
    Spelling{"-no-source-include", Class::keyed},
    // Language dialect.
    Spelling{"--std", Class::keyed},
    Spelling{"-std", Class::keyed},
    Spelling{"--builtin-move-forward", Class::keyed},
    Spelling{"-builtin-move-forward", Class::keyed},
    Spelling{"--builtin-initializer-list", Class::keyed},
    Spelling{"-builtin-initializer-list", Class::keyed},
    Spelling{"--disable-warnings", Class::keyed},
    Spelling{"-w", Class::keyed},
    Spelling{"--restrict", Class::keyed},
    Spelling{"-restrict", Class::keyed},
    Spelling{"--device-as-default-execution-space", Class::keyed},
    Spelling{"-default-device", Class::keyed},
    Spelling{"--device-int128", Class::keyed},
    Spelling{"-device-int128", Class::keyed},
    Spelling{"--optimization-info", Class::keyed},
    Spelling{"-opt-info", Class::keyed},
    Spelling{"--display-error-number", Class::keyed},
    Spelling{"-err-no", Class::keyed},
    Spelling{"--no-display-error-number", Class::keyed},
    Spelling{"-no-err-no", Class::keyed},
    Spelling{"--diag-error", Class::keyed},
    Spelling{"-diag-error", Class::keyed},
    Spelling{"--diag-suppress", Class::keyed},
    Spelling{"-diag-suppress", Class::keyed},
    Spelling{"--diag-warn", Class::keyed},
    Spelling{"-diag-warn", Class::keyed},
    Spelling{"--brief-diagnostics", Class::keyed},
    Spelling{"-brief-diag", Class::keyed},
    // Side effects: files written or read besides the headers, or output that follows timing.
    Spelling{"--create-pch", Class::side_effect},
    Spelling{"-create-pch", Class::side_effect},
    Spelling{"--use-pch", Class::side_effect},
    Spelling{"-use-pch", Class::side_effect},
    Spelling{"--pch-dir", Class::side_effect},
    Spelling{"-pch-dir", Class::side_effect},
    Spelling{"--pch", Class::side_effect},
    Spelling{"-pch", Class::side_effect},
    Spelling{"--pch-verbose", Class::side_effect},
    Spelling{"-pch-verbose", Class::side_effect},
    Spelling{"--pch-messages", Class::side_effect},
    Spelling{"-pch-messages", Class::side_effect},
    Spelling{"--instantiate-templates-in-pch", Class::side_effect},
    Spelling{"-instantiate-templates-in-pch", Class::side_effect},
    Spelling{"--time", Class::side_effect},
    Spelling{"-time", Class::side_effect},
    Spelling{"--fdevice-time-trace", Class::side_effect},
    Spelling{"-fdevice-time-trace", Class::side_effect},
    Spelling{"--split-compile", Class::side_effect},
    Spelling{"-split-compile", Class::side_effect},
};

common::Error unsupported(std::string message) {
  return common::make_error(common::ErrorCode::unsupported, std::move(message));
}

// "sm_90" for "sm_90", "compute_90", "sm_90a", "compute_100f"; empty when the value is none of them.
std::string arch_field_of(std::string_view value) {
  std::string_view digits;
  if (value.starts_with("sm_")) digits = value.substr(3);
  if (value.starts_with("compute_")) digits = value.substr(8);
  if (digits.empty()) return {};
  std::size_t n = 0;
  while (n < digits.size() && std::isdigit(static_cast<unsigned char>(digits[n])) != 0) ++n;
  const std::string_view suffix = digits.substr(n);
  if (n < 2 || digits[0] == '0' || !(suffix.empty() || suffix == "a" || suffix == "f")) return {};
  return "sm_" + std::string(digits);
}

}  // namespace

namespace {

// Whether a path option's value is one the cache names as NVRTC does. NVRTC 13.0 trims the blanks
// around an include path (`-I dir`, `-Idir `, `--include-path=dir ` all search "dir"); a value with
// a blank anywhere is not understood here, so the compile is NVRTC's own rather than probed in a
// directory NVRTC does not search (tests/integration/test_transparent_nvrtc_directive_forms.cpp).
bool plain_path(std::string_view value) {
  return !value.empty() && value.find_first_of(" \t\n\r\f\v") == std::string_view::npos;
}

}  // namespace

NvrtcOptionInfo classify_nvrtc_option(std::string_view option) {
  // -I<dir>, -D<macro>, -U<macro>: the value is glued to the flag. NVRTC 13.0 takes -I=<dir> as
  // -I<dir>.
  if (option.starts_with("-I") && option.size() > 2) {
    std::string_view value = option.substr(2);
    if (value.front() == '=') value.remove_prefix(1);
    if (!plain_path(value)) return {Class::unknown, {}};
    return {Class::include_path, std::string(value)};
  }
  if ((option.starts_with("-D") || option.starts_with("-U")) && option.size() > 2) return {Class::keyed, {}};
  const std::size_t equals = option.find('=');
  const std::string_view name = option.substr(0, equals);
  const std::string value = equals == std::string_view::npos ? std::string() : std::string(option.substr(equals + 1));
  for (const Spelling& spelling : k_spellings) {
    if (spelling.name != name) continue;
    // A path option without its value ("-include" "file" as two strings) is not understood here.
    if ((spelling.kind == Class::include_path || spelling.kind == Class::pre_include) && !plain_path(value)) {
      return {Class::unknown, {}};
    }
    return {spelling.kind, value};
  }
  return {Class::unknown, {}};
}

common::Result<NvrtcOptions> canonicalize_nvrtc_options(int count, const char* const* options) {
  if (count < 0 || (count > 0 && options == nullptr)) return unsupported("the option array is malformed");
  NvrtcOptions out;
  out.arch = "sm_75";  // NVRTC 13.0's default target, compute_75 (docs/cache-key.md "NVRTC compiles")
  bool arch_seen = false;
  for (int i = 0; i < count; ++i) {
    if (options[i] == nullptr) return unsupported("option " + std::to_string(i) + " is a null pointer");
    const std::string_view option = options[i];
    const NvrtcOptionInfo info = classify_nvrtc_option(option);
    switch (info.kind) {
      case Class::side_effect:
        return unsupported("option \"" + std::string(option) + "\" has effects besides the compile's output");
      case Class::unknown: return unsupported("option \"" + std::string(option) + "\" is not known to the cache");
      case Class::include_path: out.include_paths.push_back(info.value); break;
      case Class::pre_include: out.pre_includes.push_back(info.value); break;
      case Class::keyed: break;
    }
    const std::string_view name = option.substr(0, option.find('='));
    if (name == "-arch" || name == "--gpu-architecture") {
      if (arch_seen) return unsupported("more than one target architecture is given");
      arch_seen = true;
      out.arch = arch_field_of(info.value);
      if (out.arch.empty()) return unsupported("target architecture \"" + info.value + "\" is not understood");
    }
    if (name == "-G" || name == "--device-debug" || name == "-lineinfo" || name == "--generate-line-info") {
      out.debug_info = true;
    }
    out.keyed.emplace_back(option);
  }
  return out;
}

}  // namespace jitcache::proto
