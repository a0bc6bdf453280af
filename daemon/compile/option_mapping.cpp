#include <daemon/compile/option_mapping.hpp>

#include <array>
#include <map>
#include <utility>

#include <common/result.hpp>
#include <proto/jit_options.hpp>

// Evidence (docs/compile-service.md "Option mapping"): cuda.h 13.0's description of every
// CUjit_option, `ptxas --help` 13.0, docs/driver-facts.md §8, and a probe that linked small_kernel.ptx with
// nvJitLink 13.0 under each mapped option (the test compiles every mapping with the real library).

namespace jitcache::daemon::compile {

namespace {

using Values = std::map<std::string, std::string, std::less<>>;

// One key's contribution: options to add, or a refusal message.
struct Mapped {
  std::vector<std::string> options;
  std::string refusal;  // non-empty: refuse with this message
};

Mapped add(std::string option) { return Mapped{{std::move(option)}, {}}; }
Mapped none() { return {}; }
Mapped refuse(std::string message) { return Mapped{{}, std::move(message)}; }

using Rule = Mapped (*)(const std::string& value, const Values& all);

struct OptionRule {
  std::string_view key;
  Rule rule;
};

// One rule per key of the canonical string, in its order. A key the string gains later and this
// table lacks is refused (map_options), never silently dropped.
const std::array k_rules = {
    OptionRule{"maxrreg",
               [](const std::string& v, const Values&) { return v == "0" ? none() : add("-maxrregcount=" + v); }},
    OptionRule{"tpb",
               [](const std::string& v, const Values&) {
                 return v == "0" ? none()
                                 : refuse("tpb=" + v +
                                          " (CU_JIT_THREADS_PER_BLOCK) has no nvJitLink or ptxas "
                                          "equivalent: the driver derives a register budget from it itself");
               }},
    // Rationale: nvJitLink's own -O takes only 0 and 3, and its default is ptxas -O3, while the
    // driver's default is 4 (docs/driver-facts.md §8). So the level is always passed to ptxas, default included.
    OptionRule{"opt", [](const std::string& v, const Values&) { return add("-Xptxas=-O" + v); }},
    OptionRule{"g",
               [](const std::string& v, const Values& all) {
                 if (v == "0") return none();
                 // Rationale: ptxas fails "-g" with any -O above 0 ("Optimized debugging not supported"),
                 // and how the driver reconciles CU_JIT_GENERATE_DEBUG_INFO with its level is unverified.
                 if (all.at("opt") != "0") {
                   return refuse("g=1 with opt=" + all.at("opt") +
                                 ": ptxas refuses optimised debugging, and "
                                 "what the driver compiles for that combination is not known");
                 }
                 return add("-g");
               }},
    OptionRule{"lineinfo", [](const std::string& v, const Values&) { return v == "0" ? none() : add("-lineinfo"); }},
    OptionRule{"dlcm",
               [](const std::string& v, const Values&) { return v == "none" ? none() : add("-Xptxas=-dlcm=" + v); }},
    OptionRule{"fast",
               [](const std::string& v, const Values&) {
                 return v == "0" ? none()
                                 : refuse("fast=" + v +
                                          " (CU_JIT_FAST_COMPILE) is internal to the driver and "
                                          "undocumented; ptxas -Ofast-compile levels cannot be matched to it");
               }},
    OptionRule{"lto",
               [](const std::string& v, const Values&) {
                 return v == "0" ? none()
                                 : refuse(
                                       "lto=1 (CU_JIT_LTO) is the driver's legacy link-time optimisation of "
                                       "pre-12.0 LTO-IR; nvJitLink's -lto takes NVVM IR, not PTX");
               }},
    // Rationale: ftz, prec_div, prec_sqrt and fma are LTO-only in cuda.h and in nvJitLink: neither
    // the driver (probe, cache-key.md) nor nvJitLink (probe: identical bytes) changes PTX code for
    // them. Passing them on keeps the mapping one-to-one if that ever changes in both.
    OptionRule{"ftz", [](const std::string& v, const Values&) { return v == "0" ? none() : add("-ftz=true"); }},
    OptionRule{"prec_div",
               [](const std::string& v, const Values&) { return v == "1" ? none() : add("-prec-div=false"); }},
    OptionRule{"prec_sqrt",
               [](const std::string& v, const Values&) { return v == "1" ? none() : add("-prec-sqrt=false"); }},
    OptionRule{"fma", [](const std::string& v, const Values&) { return v == "1" ? none() : add("-fma=false"); }},
    OptionRule{"pic",
               [](const std::string& v, const Values&) {
                 return v == "0" ? none() : add("-Xptxas=--position-independent-code=true");
               }},
    // The next four are the ptxas options that cuda.h describes with the same words (limits ignored
    // with -maxrregcount, PTX directives winning unless overridden, 1 = ignored / 0 = all CPUs).
    OptionRule{"mincta", [](const std::string& v,
                            const Values&) { return v == "0" ? none() : add("-Xptxas=--minnctapersm=" + v); }},
    // Rationale: the driver's limit is the product of the block extents; a one-number --maxntid is
    // the block (N, 1, 1), whose product is N, the same limit.
    OptionRule{"maxtpb",
               [](const std::string& v, const Values&) { return v == "0" ? none() : add("-Xptxas=--maxntid=" + v); }},
    OptionRule{"override",
               [](const std::string& v, const Values&) {
                 return v == "0" ? none() : add("-Xptxas=--override-directive-values");
               }},
    OptionRule{"split", [](const std::string& v,
                           const Values&) { return v == "1" ? none() : add("-Xptxas=--split-compile=" + v); }},
};

// Splits a canonical string (already checked by canonicalize_option_text) into key → value, in order.
std::vector<std::pair<std::string, std::string>> split_pairs(std::string_view text) {
  std::vector<std::pair<std::string, std::string>> pairs;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find(';', start);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view pair = text.substr(start, end - start);
    const std::size_t equals = pair.find('=');
    pairs.emplace_back(std::string(pair.substr(0, equals)), std::string(pair.substr(equals + 1)));
    start = end + 1;
  }
  return pairs;
}

const OptionRule* find_rule(std::string_view key) {
  for (const OptionRule& rule : k_rules) {
    if (rule.key == key) return &rule;
  }
  return nullptr;
}

}  // namespace

common::Result<MappedOptions> map_options(std::string_view canonical) {
  auto checked = proto::canonicalize_option_text(canonical);
  JITCACHE_TRY(checked);
  if (*checked != canonical) {
    return common::make_error(common::ErrorCode::invalid_argument,
                              "option string is not canonical: \"" + std::string(canonical) + "\"");
  }
  const auto pairs = split_pairs(canonical);
  const Values values(pairs.begin(), pairs.end());
  MappedOptions result;
  for (const auto& [key, value] : pairs) {
    const OptionRule* rule = find_rule(key);
    Mapped mapped = rule != nullptr
                        ? rule->rule(value, values)
                        : refuse("option " + key + "=" + value + " is not known to this daemon's compile service");
    if (!mapped.refusal.empty()) {
      return MappedOptions{{}, Refusal{RefusalReason::option, std::move(mapped.refusal)}};
    }
    for (std::string& option : mapped.options) result.nvjitlink_options.push_back(std::move(option));
  }
  return result;
}

}  // namespace jitcache::daemon::compile
