// Where the daemon's TOML config file may hold non-ASCII text before it is handed to toml++: in
// comments, and in a single-line quoted string that is a key's value (`state_dir = "/srv/josé"`).
// Anywhere else jitcached refuses the file with its line, and libjitcache (which reads the same file
// for its `socket`) ignores it with a note. Here because both read that file.
//
// Rationale: toml++ 3.3.0 (Debian's) classifies some non-ASCII code points (U+00A1..U+0499,
// U+2C8E..U+3087, U+FEF6..U+FEFE) as whitespace by falling into __builtin_unreachable, which is
// undefined behaviour: fuzz_config found it with U+FEFB at the start of a line, and upstream has it
// as marzer/tomlplusplus#295 (fixed after 3.4.0 by #305). The parser asks that question of every
// character it reads outside comments and single-line value strings (bare text, keys, quoted keys,
// multi-line strings), and nowhere there can a setting use non-ASCII text, so the text is refused
// there whatever toml++ version is installed: comments and values keep working.
// Thread safety: pure function.
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

namespace jitcache::common {

// The byte offset of the first non-ASCII byte outside a comment or a single-line quoted value, or
// nullopt. A UTF-8 byte order mark at the very start is allowed (toml++ skips it). Not a TOML
// validator: text it lets through may still be refused by toml++, with its own message.
std::optional<std::size_t> find_misplaced_non_ascii(std::string_view text);

}  // namespace jitcache::common
