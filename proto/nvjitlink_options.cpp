#include <proto/nvjitlink_options.hpp>

#include <array>

#include <proto/key.hpp>

// The option list: docs/driver-facts.md §2 (nvJitLink.h 13.0 and NVIDIA's nvJitLink documentation).

namespace jitcache::proto {

namespace {

enum class Kind { arch, keyed, log, uncacheable };

struct Classified {
  Kind kind = Kind::uncacheable;
  std::string_view why;  // uncacheable only
};

// Options that are a flag with no value.
constexpr std::array<std::string_view, 5> k_keyed_flags = {"-g", "-lineinfo", "-lto", "-optimize-unused-variables",
                                                           "-device-stack-protector"};
// Options of the form -name=value, the value non-empty.
constexpr std::array<std::string_view, 13> k_keyed_with_value = {"-maxrregcount=",
                                                                 "-ftz=",
                                                                 "-prec-div=",
                                                                 "-prec-sqrt=",
                                                                 "-fma=",
                                                                 "-kernels-used=",
                                                                 "-variables-used=",
                                                                 "-Xptxas=",
                                                                 "-Xnvvm=",
                                                                 "-split-compile=",
                                                                 "-split-compile-extended=",
                                                                 "-jump-table-density=",
                                                                 "-O"};
constexpr std::array<std::string_view, 3> k_log_only = {"-verbose", "-time", "-no-cache"};
constexpr std::string_view k_arch_prefix = "-arch=";

common::Error unsupported(std::string message) {
  return common::make_error(common::ErrorCode::unsupported, std::move(message));
}

// Printable ASCII without space or ';': what the key's option text can hold unescaped.
bool spellable(std::string_view option) {
  if (option.empty()) return false;
  for (char c : option) {
    if (c <= ' ' || c > '~' || c == ';') return false;
  }
  return true;
}

bool is_digits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

Classified classify(std::string_view option) {
  if (!spellable(option)) return {Kind::uncacheable, "is empty or holds a space, a ';' or a non-ASCII byte"};
  for (std::string_view flag : k_log_only) {
    if (option == flag) return {Kind::log, {}};
  }
  if (option.starts_with(k_arch_prefix)) return {Kind::arch, {}};
  if (option == "-ptx") return {Kind::uncacheable, "asks for PTX output, which the cache does not keep"};
  for (std::string_view flag : k_keyed_flags) {
    if (option == flag) return {Kind::keyed, {}};
  }
  for (std::string_view prefix : k_keyed_with_value) {
    if (!option.starts_with(prefix) || option.size() == prefix.size()) continue;
    // -O takes a level, not text: "-Ofast" or "-Obogus" is no option nvJitLink documents.
    if (prefix == "-O" && !is_digits(option.substr(prefix.size()))) break;
    return {Kind::keyed, {}};
  }
  return {Kind::uncacheable, "is not an nvJitLink option this cache knows"};
}

std::string quoted(std::string_view option) {
  constexpr std::size_t k_max = 64;
  std::string out = "\"";
  for (std::size_t i = 0; i < option.size() && i < k_max; ++i) {
    const char c = option[i];
    out.push_back(c >= ' ' && c <= '~' ? c : '?');
  }
  out.push_back('"');
  if (option.size() > k_max) out += "...";
  return out;
}

}  // namespace

common::Result<NvJitLinkOptions> canonicalize_nvjitlink_options(std::span<const std::string_view> options) {
  NvJitLinkOptions result;
  bool have_arch = false;
  for (std::string_view option : options) {
    const Classified classified = classify(option);
    switch (classified.kind) {
      case Kind::log: result.asks_for_log |= option != "-no-cache"; break;
      case Kind::keyed: result.keyed.emplace_back(option); break;
      case Kind::arch: {
        if (have_arch) return unsupported("nvJitLink option " + quoted(option) + ": -arch is given more than once");
        const std::string_view arch = option.substr(k_arch_prefix.size());
        if (!is_valid_arch(arch)) {
          return unsupported("nvJitLink option " + quoted(option) +
                             " does not target a GPU as sm_XY[a|f] (compute_ and lto_ targets are not cached)");
        }
        result.arch = std::string(arch);
        have_arch = true;
        break;
      }
      case Kind::uncacheable:
        return unsupported("nvJitLink option " + quoted(option) + " " + std::string(classified.why));
    }
  }
  if (!have_arch) return unsupported("the nvJitLink options name no -arch=sm_XY (nvJitLinkCreate requires one)");
  return result;
}

std::string join_nvjitlink_options(const std::vector<std::string>& keyed) {
  std::string text;
  for (const std::string& option : keyed) {
    if (!text.empty()) text.push_back(' ');
    text += option;
  }
  return text;
}

common::Result<std::vector<std::string>> parse_nvjitlink_option_list(std::string_view text) {
  std::vector<std::string> keyed;
  std::size_t start = 0;
  while (start < text.size()) {
    if (text[start] == ' ' || text[start] == '\t') {
      ++start;
      continue;
    }
    std::size_t end = start;
    while (end < text.size() && text[end] != ' ' && text[end] != '\t') ++end;
    const std::string_view option = text.substr(start, end - start);
    if (classify(option).kind != Kind::keyed) {
      return common::make_error(common::ErrorCode::invalid_argument,
                                "option \"nvjitlink\": " + quoted(option) + " is not a keyed nvJitLink option");
    }
    keyed.emplace_back(option);
    start = end;
  }
  return keyed;
}

}  // namespace jitcache::proto
