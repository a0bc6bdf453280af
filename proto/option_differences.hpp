// The option-by-option difference of two canonical option strings (docs/cache-key.md "The
// canonical option string"), for `jitcache explain`: which option a stored entry was compiled with
// that the asked-for key does not have. A canonical string lists every option with its default
// written out, so two strings of one key schema name the same options and differ only in values;
// a link's string (`link=...`) differs from a module's in its first option.
// Thread safety: free functions.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace jitcache::proto {

struct OptionDifference {
  std::string option;  // its key in the string: "maxrreg", "opt", "link", ...
  std::string asked;   // its value in the first string; empty when the first lacks it
  std::string found;   // in the second; empty when the second lacks it
};

// In the first string's order, then the options only the second has. Nothing for equal strings.
// Parts without '=' are compared as whole options whose value is empty.
std::vector<OptionDifference> option_differences(std::string_view asked, std::string_view found);

}  // namespace jitcache::proto
