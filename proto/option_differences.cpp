#include <proto/option_differences.hpp>

#include <algorithm>
#include <utility>

namespace jitcache::proto {

namespace {

std::vector<std::pair<std::string, std::string>> split_options(std::string_view text) {
  std::vector<std::pair<std::string, std::string>> out;
  while (!text.empty()) {
    const std::size_t end = std::min(text.find(';'), text.size());
    const std::string_view part = text.substr(0, end);
    const std::size_t equals = part.find('=');
    if (!part.empty()) {
      out.emplace_back(std::string(part.substr(0, equals)),
                       equals == std::string_view::npos ? std::string() : std::string(part.substr(equals + 1)));
    }
    text.remove_prefix(std::min(end + 1, text.size()));
  }
  return out;
}

const std::pair<std::string, std::string>* find_option(const std::vector<std::pair<std::string, std::string>>& options,
                                                       const std::string& key) {
  const auto it = std::find_if(options.begin(), options.end(), [&](const auto& option) { return option.first == key; });
  return it == options.end() ? nullptr : &*it;
}

}  // namespace

std::vector<OptionDifference> option_differences(std::string_view asked, std::string_view found) {
  std::vector<OptionDifference> out;
  if (asked == found) return out;
  const auto a = split_options(asked);
  const auto b = split_options(found);
  for (const auto& [key, value] : a) {
    const auto* other = find_option(b, key);
    if (other == nullptr) out.push_back({key, value, ""});
    else if (other->second != value) out.push_back({key, value, other->second});
  }
  for (const auto& [key, value] : b) {
    if (find_option(a, key) == nullptr) out.push_back({key, "", value});
  }
  return out;
}

}  // namespace jitcache::proto
