#include <tests/support/ptx_entries.hpp>

#include <cctype>
#include <set>

namespace jitcache::testing {

namespace {
bool is_space(char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; }
// PTX identifiers: [a-zA-Z_$%][a-zA-Z0-9_$%]* (PTX ISA "Identifiers").
bool is_name_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '$' || c == '%';
}
}  // namespace

std::vector<std::string> ptx_entry_names(std::string_view ptx) {
  constexpr std::string_view k_directive = ".entry";
  std::set<std::string> names;
  for (auto at = ptx.find(k_directive); at != std::string_view::npos; at = ptx.find(k_directive, at + 1)) {
    auto begin = at + k_directive.size();
    if (begin >= ptx.size() || !is_space(ptx[begin])) continue;  // e.g. a name that merely starts with ".entry"
    while (begin < ptx.size() && is_space(ptx[begin])) ++begin;
    auto end = begin;
    while (end < ptx.size() && is_name_char(ptx[end])) ++end;
    if (end > begin) names.emplace(ptx.substr(begin, end - begin));
  }
  return {names.begin(), names.end()};
}

}  // namespace jitcache::testing
