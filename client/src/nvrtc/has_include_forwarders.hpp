// The macros of one compile that apply __has_include or __has_include_next to a parameter, at one
// level or through others (`#define F(x) __has_include(x)`, `#define G(y) F(y)`, `#define H F`),
// and the files their calls probe (docs/cache-key.md "Files read from disk"). A call of such a
// macro with a literal `<file>` or `"file"` is a probe of that file, as `__has_include(<file>)` is;
// one whose argument is anything else (a macro, a pasted name) cannot be named, and the compile is
// NVRTC's own (ErrorCode::unsupported).
//
// Conservative as the rest of the scan: a macro is a forwarder if any of its definitions in any
// text of the compile forwards, whatever #if or #undef surrounds it, so a probe is never missed;
// the price is a refusal where an unrelated macro of the same name is called with a non-literal.
// Thread safety: one object per scan, one thread.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include <client/src/nvrtc/include_directives.hpp>
#include <common/result.hpp>

namespace jitcache::client::nvrtc {

// A file a call probes. One in a #define's body is searched for from the file that uses the macro,
// which may lie in another directory: the scan looks for it from every directory it has seen.
struct ForwardedProbe {
  std::string name;
  bool in_definition = false;
  bool bracketed = false;  // `<name>`: looked for in the include paths only
};

class HasIncludeForwarders {
 public:
  HasIncludeForwarders();

  // Adds what `text` defines to what is known; `text` must outlive this object.
  void add(const IncludeDirectives& text);

  // Learns the forwarders among every definition added so far. Returns whether a macro became a
  // forwarder, or forwards another parameter: then every text's calls must be looked at again.
  bool settle();

  // The file names `text`'s calls of forwarders probe, in order; ErrorCode::unsupported with the
  // call when one's file cannot be named.
  common::Result<std::vector<ForwardedProbe>> probes(const IncludeDirectives& text) const;

 private:
  // Parameter index -> whether it is variadic (its argument runs to the end of the call).
  using Forwarded = std::map<std::size_t, bool>;

  bool learn(const std::string& macro, std::size_t index, bool variadic);

  std::unordered_map<std::string, Forwarded> m_forwarders;
  // Calls in a definition's body that pass one of its parameters on, and one-identifier aliases:
  // all that settle() needs to look at.
  std::vector<std::pair<const MacroCall*, const MacroDefinition*>> m_passing;
  std::vector<const MacroDefinition*> m_aliases;
};

// The names `text` includes or probes, those through forwarders it defines itself included.
common::Result<std::vector<std::string>> included_names_of(const IncludeDirectives& text);

}  // namespace jitcache::client::nvrtc
