#pragma once
// The lines of an NVRTC compile's include record (client/src/nvrtc/include_scan.hpp): one
// "<path>\0<state>\n" per path the compile may read, the state "absent", "other" (there, but no
// regular file NVRTC can read) or "file <sha256 hex>". Parsed here for every reader of the record.
#include <optional>
#include <string_view>
#include <vector>

namespace jitcache::proto {

struct IncludeRecordLine {
  std::string_view path;
  std::string_view state;
};

// The record's lines, in order, viewing `record`; nullopt when a line lacks its NUL or its newline.
std::optional<std::vector<IncludeRecordLine>> include_record_lines(std::string_view record);

}  // namespace jitcache::proto
