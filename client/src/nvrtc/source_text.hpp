// A source or header as NVRTC's preprocessor reads its directives: the backslash-newlines removed
// (translation phase 2) and every comment made one blank (phase 3). NVRTC 13.0 takes a comment as a
// blank anywhere in a directive and before its `#` (`#/* */include`, `/* */ #include`, a comment
// begun on an earlier line, `__has_include /* */ (...)`:
// tests/integration/test_transparent_nvrtc_directive_forms.cpp compiles each), so the include scan
// (client/src/nvrtc/include_directives.hpp) must read the text as these phases leave it.
// Thread safety: pure functions.
#pragma once

#include <string>
#include <string_view>

namespace jitcache::client::nvrtc {

// `text` with every backslash-newline (and backslash-CR-LF) removed.
std::string spliced(std::string_view text);

// `text` (already spliced) with every `/* */` and `//` comment replaced by one space; a block
// comment's newlines are kept, so every line keeps its number and a directive after `/* ... */`
// still begins its line. String and character literals, raw ones included, are copied as they are
// (a "/*" in one opens no comment); one left open ends at its line's end, as the preprocessor takes
// it, so a stray quote hides nothing beyond its line. A digit separator (1'000) opens no literal.
std::string decommented(std::string_view text);

}  // namespace jitcache::client::nvrtc
