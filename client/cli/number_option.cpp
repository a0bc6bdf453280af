#include <client/cli/number_option.hpp>

#include <charconv>
#include <string>

namespace jitcache::client::cli {

CLI::Validator whole_number(std::uint64_t min, std::uint64_t max) {
  const std::string range = std::to_string(min) + ".." + std::to_string(max);
  return CLI::Validator(
      [min, max, range](std::string& text) -> std::string {
        std::uint64_t value = 0;
        const char* end = text.data() + text.size();
        const bool digits = !text.empty() && text.find_first_not_of("0123456789") == std::string::npos;
        const auto parsed = std::from_chars(text.data(), end, value);
        if (!digits || parsed.ec != std::errc() || parsed.ptr != end || value < min || value > max) {
          return "\"" + text + "\" is not a whole number in " + range;
        }
        return {};
      },
      "NUMBER in " + range, "whole_number");
}

}  // namespace jitcache::client::cli
