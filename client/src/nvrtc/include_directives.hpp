// What one text (a source, a header) says about the files a compile may read, as the include scan
// (client/src/nvrtc/include_scan.hpp) needs it: the names it includes or probes with a literal
// name, and what it takes to follow a probe made through a forwarding macro
// (`#define F(x) __has_include(x)` here, `#if F(<file>)` there, docs/cache-key.md "Files read from
// disk"): the function-like macros whose body passes a parameter on to another macro, and every
// macro call on an `#if`, `#elif` or `#define` line. Which macros forward is known only once every
// text of a compile has been read, so the texts are parsed one by one (and remembered per file)
// and resolved together (client/src/nvrtc/has_include_forwarders.hpp). A text is read as NVRTC's
// preprocessor reads it, comments as blanks (client/src/nvrtc/source_text.hpp), and its include
// names as written too. An include named through a macro is kept as written, resolved once every
// text's macros are known (client/src/nvrtc/macro_named_includes.hpp).
// Thread safety: pure functions.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include <common/result.hpp>

namespace jitcache::client::nvrtc {

// `NAME(arguments)` on an #if, #elif or #define line (nested calls each on their own).
struct MacroCall {
  std::string macro;
  std::vector<std::string> arguments;  // as written, blanks around each removed
  int definition = -1;                 // the #define (index in definitions) whose body holds it; -1: none
  // In a #define's body: expanded, and so searched for, from whichever file uses the macro.
  bool in_definition = false;
};

// A #define that may forward a probe: function-like, or object-like with one identifier as its body
// (`#define HAS __has_include` makes HAS a forwarder too).
struct MacroDefinition {
  std::string name;
  bool function_like = false;
  std::vector<std::string> parameters;  // `...` as __VA_ARGS__, `name...` as name
  bool variadic = false;                // its last parameter takes the rest of a call's arguments
  std::string alias;                    // object-like: the identifier that is its body
};

// An object-like #define, whatever its body: a candidate wherever an include is named through it
// (client/src/nvrtc/macro_named_includes.hpp).
struct ObjectMacro {
  std::string name;
  std::string body;  // comments as blanks, blanks around it removed
};

struct IncludeDirectives {
  std::vector<std::string> names;  // #include, #include_next, #import, __has_include with a literal name
  // Per names[i]: written `<name>`, which NVRTC looks for in the include paths only.
  std::vector<bool> bracketed;
  std::vector<MacroDefinition> definitions;
  std::vector<MacroCall> calls;
  std::vector<ObjectMacro> objects;        // every object-like #define
  std::vector<std::string> function_like;  // the name of every function-like #define
  // What follows `#include` (or `#include_next`, `#import`) where it is no literal name, trimmed.
  std::vector<std::string> macro_includes;
  // The first of __DATE__, __TIME__ and __TIMESTAMP__ the text names, anywhere (a comment too, as
  // ccache's direct mode looks); empty when none. A compile that expands one is not repeatable.
  std::string time_macro;
};

// An #include that names its file through a macro is kept in macro_includes, not followed here.
common::Result<IncludeDirectives> parse_include_directives(std::string_view text);

// A probe argument written as a literal file name, `<name>` or `"name"`: the name; empty otherwise.
std::string literal_file_name(std::string_view argument);

}  // namespace jitcache::client::nvrtc
