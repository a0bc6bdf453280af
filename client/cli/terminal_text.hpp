// Text from the daemon (producers, arch and driver strings, counter names, versions, messages) made
// safe to print: every byte that is not printable text (proto/printable_text.hpp: control
// characters, bidirectional controls, invalid UTF-8) is shown as an escape, so nothing the daemon
// stored on another user's behalf can move the cursor, rewrite the screen, set the terminal's title
// or reorder what is shown. Every text printer of the CLI passes daemon-supplied strings through
// it; JSON output gets the same protection from json_output.hpp (ASCII-only JSON).
// Thread safety: pure function.
#pragma once

#include <string>
#include <string_view>

namespace jitcache::client::cli {

// Printable text unchanged, except that a backslash is doubled (so an escape below cannot be
// faked); a control character or an invalid byte becomes \xHH, a C1 control or a bidirectional
// control \u{HHHH} ("\x1b[31m" prints as "\x1b[31m", U+202E as "\u{202e}").
std::string terminal_text(std::string_view text);

}  // namespace jitcache::client::cli
