#include <client/src/key/embedded_ptxas_options.hpp>

#include <cctype>
#include <charconv>
#include <optional>
#include <string>

namespace jitcache::client::key {

using common::ErrorCode;
using common::make_error;

namespace {

std::vector<std::string_view> words_of(std::string_view text) {
  std::vector<std::string_view> words;
  std::size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
    std::size_t start = i;
    while (i < text.size() && !std::isspace(static_cast<unsigned char>(text[i]))) ++i;
    if (i > start) words.push_back(text.substr(start, i - start));
  }
  return words;
}

std::optional<std::uintptr_t> number(std::string_view s) {
  std::uintptr_t value = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return value;
}

common::Error not_mappable(std::string_view word, std::string_view why) {
  return make_error(ErrorCode::unsupported,
                    "the fat binary's embedded ptxas option \"" + std::string(word) + "\" " + std::string(why));
}

}  // namespace

common::Result<std::vector<JitOptionValue>> parse_embedded_ptxas_options(std::string_view text) {
  std::vector<JitOptionValue> options;
  const auto words = words_of(text);
  bool debug = false;
  bool debug_companions = false;
  for (std::size_t i = 0; i < words.size(); ++i) {
    std::string_view word = words[i];
    if (word.starts_with("-O") && word.size() == 3) {
      auto level = number(word.substr(2));
      if (!level || *level > 4) return not_mappable(word, "is not an optimisation level 0-4");
      options.push_back({CU_JIT_OPTIMIZATION_LEVEL, *level});
    } else if (word.starts_with("-maxrregcount=") || word.starts_with("--maxrregcount=")) {
      auto count = number(word.substr(word.find('=') + 1));
      if (!count || *count == 0) return not_mappable(word, "is not a register count");
      options.push_back({CU_JIT_MAX_REGISTERS, *count});
    } else if ((word == "-maxrregcount" || word == "--maxrregcount") && i + 1 < words.size()) {
      auto count = number(words[++i]);
      if (!count || *count == 0) return not_mappable(word, "is not followed by a register count");
      options.push_back({CU_JIT_MAX_REGISTERS, *count});
    } else if (word == "--generate-line-info" || word == "-lineinfo") {
      options.push_back({CU_JIT_GENERATE_LINE_INFO, 1});
    } else if (word == "-g" || word == "--device-debug") {
      options.push_back({CU_JIT_GENERATE_DEBUG_INFO, 1});
      debug = true;
    } else if (word == "--dont-merge-basicblocks" || word == "--return-at-end") {
      // nvcc -G adds these beside -g; CU_JIT_GENERATE_DEBUG_INFO implies both.
      debug_companions = true;
    } else {
      return not_mappable(word, "has no CUjit_option equivalent");
    }
  }
  if (debug_companions && !debug) {
    return make_error(ErrorCode::unsupported,
                      "the fat binary's embedded ptxas options \"" + std::string(text) +
                          "\" ask for debug-style code generation without -g; no CUjit_option says that");
  }
  return options;
}

}  // namespace jitcache::client::key
