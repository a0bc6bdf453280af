#include <proto/include_record_lines.hpp>

namespace jitcache::proto {

std::optional<std::vector<IncludeRecordLine>> include_record_lines(std::string_view record) {
  std::vector<IncludeRecordLine> lines;
  for (std::size_t at = 0; at < record.size();) {
    const std::size_t nul = record.find('\0', at);
    const std::size_t end = record.find('\n', at);
    if (nul == std::string_view::npos || end == std::string_view::npos || nul > end) return std::nullopt;
    lines.push_back({record.substr(at, nul - at), record.substr(nul + 1, end - nul - 1)});
    at = end + 1;
  }
  return lines;
}

}  // namespace jitcache::proto
