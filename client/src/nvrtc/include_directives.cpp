#include <client/src/nvrtc/include_directives.hpp>

#include <string.h>

#include <cctype>
#include <unordered_set>

#include <client/src/nvrtc/source_text.hpp>

namespace jitcache::client::nvrtc {

namespace {

common::Error unsupported(std::string message) {
  return common::make_error(common::ErrorCode::unsupported, std::move(message));
}

// ASCII, as NVRTC's identifiers in directives are; std::isalnum is a call per character (a tenth of
// a first scan's parse).
bool identifier_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

// Blanks within a line: NVRTC 13.0 takes a form feed or vertical tab as a space, after the `#` too
// (tests/integration/test_transparent_nvrtc_directive_forms.cpp).
bool blank(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v'; }

std::size_t skip_blanks(std::string_view text, std::size_t at) {
  while (at < text.size() && blank(text[at])) ++at;
  return at;
}

std::string_view trimmed(std::string_view text) {
  const std::size_t begin = skip_blanks(text, 0);
  std::size_t end = text.size();
  while (end > begin && blank(text[end - 1])) --end;
  return text.substr(begin, end - begin);
}

std::string_view identifier_at(std::string_view text, std::size_t at) {
  std::size_t end = at;
  while (end < text.size() && identifier_char(text[end])) ++end;
  return text.substr(at, end - at);
}

// The quoted or bracketed name at `at`, or an error: a name given through a macro.
common::Result<std::string> name_at(std::string_view text, std::size_t at, std::string_view directive) {
  if (at < text.size() && (text[at] == '"' || text[at] == '<')) {
    const char close = text[at] == '"' ? '"' : '>';
    std::size_t end = at + 1;
    while (end < text.size() && text[end] != close && text[end] != '\n') ++end;
    if (end < text.size() && text[end] == close) return std::string(text.substr(at + 1, end - at - 1));
  }
  const std::size_t line_end = text.find('\n', at);
  return unsupported(std::string(directive) + " names its file through a macro: \"" +
                     std::string(text.substr(at, line_end == std::string_view::npos ? 40 : line_end - at)) + "\"");
}

// Past the string or character literal that opens at `at`.
std::size_t past_literal(std::string_view text, std::size_t at) {
  const char quote = text[at];
  std::size_t i = at + 1;
  while (i < text.size() && text[i] != quote) i += text[i] == '\\' ? 2 : 1;
  return std::min(i + 1, text.size());
}

// The arguments of the call whose '(' is at `open`, split at the commas outside nested parentheses
// and literals. An unclosed call (the line ends first) gives what it has: a probe it may hide is then
// refused, not missed.
std::vector<std::string> arguments_at(std::string_view text, std::size_t open) {
  std::vector<std::string> arguments;
  int depth = 0;
  std::size_t start = open + 1;
  for (std::size_t i = open + 1; i < text.size();) {
    const char c = text[i];
    if (c == '"' || c == '\'') {
      i = past_literal(text, i);
      continue;
    }
    if (c == '(') ++depth;
    if ((c == ')' && depth == 0) || (c == ',' && depth == 0)) {
      arguments.emplace_back(trimmed(text.substr(start, i - start)));
      if (c == ')') return arguments;
      start = i + 1;
    } else if (c == ')') {
      --depth;
    }
    ++i;
  }
  arguments.emplace_back(trimmed(text.substr(start)));
  return arguments;
}

bool is_has_include(std::string_view name) { return name == "__has_include" || name == "__has_include_next"; }

// Every `NAME(...)` in a directive's expression or body, nested ones included.
void collect_calls(std::string_view text, int definition, bool in_definition, std::vector<MacroCall>& calls) {
  for (std::size_t i = 0; i < text.size();) {
    const char c = text[i];
    if (c == '"' || c == '\'') {
      i = past_literal(text, i);
    } else if (std::isdigit(static_cast<unsigned char>(c)) != 0) {
      while (i < text.size() && (identifier_char(text[i]) || text[i] == '.')) ++i;  // a number, 1e5 or 0x1fULL
    } else if (identifier_char(c)) {
      const std::string_view name = identifier_at(text, i);
      i += name.size();
      const std::size_t open = skip_blanks(text, i);
      if (open >= text.size() || text[open] != '(') continue;
      std::vector<std::string> arguments = arguments_at(text, open);
      bool named = false;
      for (const std::string& argument : arguments) named = named || !argument.empty();
      // A literal __has_include on an #if line is already among the names; `X()` cannot name a file.
      if (!named || (!in_definition && is_has_include(name) && arguments.size() == 1 &&
                     !literal_file_name(arguments[0]).empty())) {
        continue;
      }
      calls.push_back(MacroCall{std::string(name), std::move(arguments), definition, in_definition});
    } else {
      ++i;
    }
  }
}

// A #define line's macro, from just after the word "define".
void parse_definition(std::string_view line, IncludeDirectives& out) {
  std::size_t at = skip_blanks(line, 0);
  MacroDefinition definition;
  definition.name = std::string(identifier_at(line, at));
  if (definition.name.empty()) return;
  at += definition.name.size();
  if (at < line.size() && line[at] == '(') {
    definition.function_like = true;
    out.function_like.push_back(definition.name);
    const std::size_t close = line.find(')', at);
    if (close == std::string_view::npos) return;
    for (std::string& parameter : arguments_at(line.substr(0, close + 1), at)) {
      if (parameter.size() >= 3 && parameter.compare(parameter.size() - 3, 3, "...") == 0) {
        definition.variadic = true;
        parameter.resize(parameter.size() - 3);
        parameter = std::string(trimmed(parameter));
        if (parameter.empty()) parameter = "__VA_ARGS__";
      }
      definition.parameters.push_back(std::move(parameter));
    }
    at = close + 1;
  }
  const std::string_view body = trimmed(line.substr(at));
  if (!definition.function_like) {
    out.objects.push_back(ObjectMacro{definition.name, std::string(body)});
    // Only an alias can forward a probe; any other body's calls stand for themselves.
    if (body.empty() || identifier_at(body, 0) != body || std::isdigit(static_cast<unsigned char>(body[0])) != 0) {
      collect_calls(body, -1, true, out.calls);
      return;
    }
    definition.alias = std::string(body);
    out.definitions.push_back(std::move(definition));
    return;
  }
  const std::size_t first_call = out.calls.size();
  collect_calls(body, static_cast<int>(out.definitions.size()), true, out.calls);
  // Kept only when some call in the body passes a parameter on whole: the rest cannot forward.
  bool forwards = false;
  for (std::size_t i = first_call; i < out.calls.size() && !forwards; ++i) {
    for (const std::string& argument : out.calls[i].arguments) {
      for (const std::string& parameter : definition.parameters) forwards = forwards || argument == parameter;
    }
  }
  if (forwards) {
    out.definitions.push_back(std::move(definition));
    return;
  }
  for (std::size_t i = first_call; i < out.calls.size(); ++i) out.calls[i].definition = -1;
}

// The directive whose `#` (or its digraph `%:`, which NVRTC 13.0 takes as one) ends just before
// `at`, on the line that ends at `end`, into `out`: with `everything`, the include names, the calls
// on #if and #elif lines and the macros defined; without, the include names only.
common::Result<void> parse_directive(std::string_view text, std::size_t at, std::size_t end, bool everything,
                                     IncludeDirectives& out) {
  at = skip_blanks(text, at);
  const std::string_view directive = identifier_at(text.substr(0, end), at);
  const std::string_view rest = text.substr(at + directive.size(), end - at - directive.size());
  if (directive == "include_next" || directive == "include" || directive == "import") {
    const std::size_t open = skip_blanks(text, at + directive.size());
    auto name = name_at(text, open, "#" + std::string(directive));
    if (!name) {
      if (everything) out.macro_includes.emplace_back(trimmed(text.substr(open, end - std::min(open, end))));
      return {};
    }
    out.names.push_back(std::move(*name));
    out.bracketed.push_back(text[open] == '<');
  } else if (everything && (directive == "if" || directive == "elif")) {
    collect_calls(rest, -1, false, out.calls);
  } else if (everything && directive == "define") {
    parse_definition(rest, out);
  }
  return {};
}

std::size_t line_end(std::string_view text, std::size_t at) { return std::min(text.find('\n', at), text.size()); }

// Whether only blanks precede `at` on its line.
bool begins_line(std::string_view text, std::size_t at) {
  while (at > 0 && blank(text[at - 1])) --at;
  return at == 0 || text[at - 1] == '\n';
}

// Every directive of `text` in order, given to `parse` as (just after its `#` or `%:`, its line's
// end). Found from each `#` and `%:` (memchr and memmem) that only blanks precede on its line: a
// line-by-line walk cost a call per line.
template <typename Parse>
common::Result<void> for_each_directive(std::string_view text, Parse parse) {
  std::size_t hash = text.find('#');
  std::size_t digraph = text.find("%:");
  while (hash != std::string_view::npos || digraph != std::string_view::npos) {
    const bool is_hash = digraph == std::string_view::npos || (hash != std::string_view::npos && hash < digraph);
    const std::size_t at = is_hash ? hash : digraph;
    if (begins_line(text, at)) JITCACHE_TRY(parse(at + (is_hash ? 1 : 2), line_end(text, at)));
    if (is_hash) {
      hash = text.find('#', at + 1);
    } else {
      digraph = text.find("%:", at + 2);
    }
  }
  return {};
}

// __has_include with a literal name anywhere (a macro's body, a comment): a superset. One whose
// name is not literal is judged where it matters, on its directive's line, among the calls.
void add_has_include_names(std::string_view text, IncludeDirectives& out) {
  constexpr std::string_view word = "__has_include";
  // memmem, not string_view::find, which stops at every '_' (libcu++ is full of them) to compare.
  const auto find = [&](std::size_t from) -> std::size_t {
    if (from >= text.size()) return std::string_view::npos;
    const void* found = ::memmem(text.data() + from, text.size() - from, word.data(), word.size());
    return found == nullptr ? std::string_view::npos
                            : static_cast<std::size_t>(static_cast<const char*>(found) - text.data());
  };
  for (std::size_t at = find(0); at != std::string_view::npos; at = find(at + 1)) {
    std::size_t after = at + word.size();
    if (text.compare(after, 5, "_next") == 0) after += 5;
    if (after < text.size() && identifier_char(text[after])) continue;  // another identifier that begins the same way
    after = skip_blanks(text, after);
    if (after >= text.size() || text[after] != '(') continue;  // `#ifdef __has_include`: no file is named
    const std::size_t open = skip_blanks(text, after + 1);
    auto name = name_at(text, open, "__has_include");
    if (!name) continue;
    out.names.push_back(std::move(*name));
    out.bracketed.push_back(text[open] == '<');
  }
}

// The first of __DATE__, __TIME__, __TIMESTAMP__ written in `text` as an identifier of its own.
std::string time_macro_in(std::string_view text) {
  for (std::string_view macro : {"__DATE__", "__TIME__", "__TIMESTAMP__"}) {
    for (const char* found = nullptr; text.size() >= macro.size();) {
      found = static_cast<const char*>(::memmem(text.data(), text.size(), macro.data(), macro.size()));
      if (found == nullptr) break;
      const std::size_t at = static_cast<std::size_t>(found - text.data());
      const std::size_t end = at + macro.size();
      if ((at == 0 || !identifier_char(text[at - 1])) && (end == text.size() || !identifier_char(text[end]))) {
        return std::string(macro);
      }
      text.remove_prefix(at + 1);
    }
  }
  return {};
}

}  // namespace

std::string literal_file_name(std::string_view argument) {
  if (argument.size() < 3) return {};
  const char open = argument.front();
  const char close = argument.back();
  if (!((open == '<' && close == '>') || (open == '"' && close == '"'))) return {};
  const std::string_view name = argument.substr(1, argument.size() - 2);
  if (name.find(close) != std::string_view::npos) return {};
  return std::string(name);
}

common::Result<IncludeDirectives> parse_include_directives(std::string_view raw) {
  const std::string text = spliced(raw);
  IncludeDirectives out;
  // The text as the preprocessor reads it, comments made blanks: every directive, call and macro.
  const std::string read = decommented(text);
  JITCACHE_TRY(for_each_directive(read, [&](std::size_t at, std::size_t end) {
    return parse_directive(read, at, end, true, out);
  }));
  add_has_include_names(read, out);
  // The text as written too, for names only (a directive in a comment counts: a superset, and a
  // guard should a literal be taken for a comment). A name given through a macro is judged above,
  // where comments are blanks: here it is a directive in a comment, or one `#include /* */ "a.h"`
  // spells with a comment before its name, and is skipped.
  IncludeDirectives written;
  static_cast<void>(for_each_directive(text, [&](std::size_t at, std::size_t end) -> common::Result<void> {
    static_cast<void>(parse_directive(text, at, end, false, written));
    return {};
  }));
  add_has_include_names(text, written);
  // Each name once in each spelling, where it was first found (the scan follows each anyway, at a
  // cost).
  std::vector<std::string> names;
  std::vector<bool> bracketed;
  std::unordered_set<std::string> seen;
  for (IncludeDirectives* list : {&out, &written}) {
    for (std::size_t i = 0; i < list->names.size(); ++i) {
      if (!seen.insert((list->bracketed[i] ? "<" : "\"") + list->names[i]).second) continue;
      names.push_back(std::move(list->names[i]));
      bracketed.push_back(list->bracketed[i]);
    }
  }
  out.bracketed = std::move(bracketed);
  out.names = std::move(names);
  out.time_macro = time_macro_in(text);
  return out;
}

}  // namespace jitcache::client::nvrtc
