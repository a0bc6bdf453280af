// JSON text for what libjitcache writes itself (the process report, process_report.hpp), without a
// JSON library in other people's processes.
//
// Rationale: the text written comes from compiler logs and file names, which need not be UTF-8. A
// general JSON library either refuses such a string (nlohmann's dump() throws on invalid UTF-8) or
// needs a policy chosen at every call; here there is one rule: valid UTF-8 is written as it is,
// every byte of an invalid sequence becomes U+FFFD, and control characters are escaped, so the
// output always parses.
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace jitcache::client::loader {

// Appends `text` as a JSON string, quotes included.
void append_json_string(std::string& out, std::string_view text);

// Appends "key": (the key escaped as above) for an object member.
void append_json_key(std::string& out, std::string_view key);

void append_json_number(std::string& out, std::uint64_t value);
void append_json_number(std::string& out, std::int64_t value);

}  // namespace jitcache::client::loader
