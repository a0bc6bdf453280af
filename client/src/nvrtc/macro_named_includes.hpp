// The files an include may name through an object-like macro (`#include HEADER`, Thrust's
// `#define __THRUST_DEVICE_SYSTEM_COPY_HEADER <__THRUST_DEVICE_SYSTEM_ROOT/detail/copy.h>`), for
// the include scan (client/src/nvrtc/include_scan.hpp, docs/cache-key.md "Files read from disk").
//
// Which definition of a macro is in force where the include stands depends on the #if and #undef
// around it, which the scan does not evaluate; so every definition of each macro in any text of the
// compile (and in the options' -D) is a candidate, and the include's names are the union of what
// each choice expands to. Recording more files than the compile reads never makes a wrong hit. An
// identifier between `<` and `>` is expanded as the preprocessor does (every definition, and the
// identifier itself: the macro may be undefined there); one left as the whole expansion stands for
// "no macro defined here", a compile error whatever the disk holds, and names no file.
//
// Refused (ErrorCode::unsupported, the message says why): a macro the texts never define (it may
// be one NVRTC predefines, which this cannot see), as is an identifier between `<` and `>` with a
// reserved name (`__x`, `_X`) that no text defines; a macro NVRTC predefines
// (nvrtc_predefined_macros.hpp), whatever the texts define; a function-like macro called, or one whose
// name ends a body (a `(` after it could call it); `#` or `##` in a body (stringizing, pasting);
// blanks inside a `<...>` built by expansion (preprocessors differ in the spaces they keep there);
// an expansion that is no file name; more than k_max_macro_candidates names or a nesting deeper
// than k_max_macro_depth.
// Thread safety: one object per scan, one thread.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <client/src/nvrtc/include_directives.hpp>
#include <common/result.hpp>

namespace jitcache::client::nvrtc {

// Rationale: Thrust's names take 2 to 6 choices (its four device systems, three host systems, the
// identifier left as it is); 64 leaves room while a header written to multiply choices (ten macros of
// ten definitions in one name) is refused in microseconds instead of probing millions of paths.
inline constexpr std::size_t k_max_macro_candidates = 64;
inline constexpr std::size_t k_max_macro_depth = 32;

struct MacroNamedFile {
  std::string name;
  bool bracketed = false;
};

// The values of the -D<value>, -D=<value> (NVRTC 13.0 takes the `=` as -D's own, as for -I=) and
// --define-macro=<value> among a compile's options, in order (-U is not looked at: a definition
// more is a candidate more, never a missed one).
std::vector<std::string> defined_by_options(const std::vector<std::string>& options);

// The -D values as the text of #define lines NVRTC makes of them (`NAME` is `NAME 1`, `NAME=body`
// and `NAME(x)=body` are `NAME body` and `NAME(x) body`): the scan reads it as one more text of
// the compile, so an option's macro names headers, probes files (`-DP=__has_include("f.h")`) or
// expands __TIME__ exactly as one the source defines.
std::string definitions_text(const std::vector<std::string>& defines);

class MacroNamedIncludes {
 public:
  // Every object-like definition and function-like macro name `text` has.
  void add(const IncludeDirectives& text);
  // How many definitions are known: more since the last call means resolutions may name more.
  std::size_t definitions() const { return m_count; }

  // The files an include written `written` (what follows `#include`) may name.
  common::Result<std::vector<MacroNamedFile>> resolve(std::string_view written) const;

 private:
  common::Result<std::vector<std::string>> expand(std::string_view text, std::vector<std::string>& active,
                                                  bool in_body) const;

  std::unordered_map<std::string, std::vector<std::string>> m_objects;  // name -> distinct bodies
  std::unordered_set<std::string> m_function_like;
  std::size_t m_count = 0;
};

}  // namespace jitcache::client::nvrtc
