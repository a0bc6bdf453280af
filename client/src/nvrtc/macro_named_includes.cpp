#include <client/src/nvrtc/macro_named_includes.hpp>

#include <algorithm>

#include <client/src/nvrtc/nvrtc_predefined_macros.hpp>

namespace jitcache::client::nvrtc {

namespace {

common::Error unsupported(std::string message) {
  return common::make_error(common::ErrorCode::unsupported, std::move(message));
}

bool identifier_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool identifier_char(char c) { return identifier_start(c) || (c >= '0' && c <= '9'); }
bool blank(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v'; }

std::string_view trimmed(std::string_view text) {
  while (!text.empty() && blank(text.front())) text.remove_prefix(1);
  while (!text.empty() && blank(text.back())) text.remove_suffix(1);
  return text;
}

// Reserved to the implementation (C++ [lex.name]): where NVRTC's own predefined macros live.
bool reserved(std::string_view name) {
  return name.size() >= 2 && name[0] == '_' && (name[1] == '_' || (name[1] >= 'A' && name[1] <= 'Z'));
}

bool is_identifier(std::string_view text) {
  if (text.empty() || !identifier_start(text[0])) return false;
  return std::all_of(text.begin(), text.end(), identifier_char);
}

}  // namespace

std::vector<std::string> defined_by_options(const std::vector<std::string>& options) {
  std::vector<std::string> values;
  for (const std::string& option : options) {
    if (option.size() > 2 && option.starts_with("-D")) values.push_back(option.substr(option[2] == '=' ? 3 : 2));
    if (option.starts_with("--define-macro=")) values.push_back(option.substr(15));
  }
  return values;
}

std::string definitions_text(const std::vector<std::string>& defines) {
  std::string text;
  for (const std::string& define : defines) {
    const std::size_t equals = define.find('=');
    text += "#define ";
    text += equals == std::string::npos ? define + " 1" : define.substr(0, equals) + " " + define.substr(equals + 1);
    // An empty line after each: a value ending in a backslash (`-DA=x\`, which NVRTC 13.0 takes)
    // splices only that line, not the next option's definition.
    text += "\n\n";
  }
  return text;
}

void MacroNamedIncludes::add(const IncludeDirectives& text) {
  for (const ObjectMacro& macro : text.objects) {
    std::vector<std::string>& bodies = m_objects[macro.name];
    if (std::find(bodies.begin(), bodies.end(), macro.body) != bodies.end()) continue;
    bodies.push_back(macro.body);
    ++m_count;
  }
  for (const std::string& name : text.function_like) m_count += m_function_like.insert(name).second ? 1 : 0;
}

// Every text `text` may become once its identifiers are replaced, one choice of definition per
// macro; `active` holds the macros being expanded (not expanded again inside themselves, as the
// preprocessor does not).
common::Result<std::vector<std::string>> MacroNamedIncludes::expand(std::string_view text,
                                                                    std::vector<std::string>& active,
                                                                    bool in_body) const {
  if (active.size() > k_max_macro_depth) {
    return unsupported("macros nest deeper than " + std::to_string(k_max_macro_depth));
  }
  std::vector<std::string> outs{std::string()};
  const auto append = [&](std::string_view piece) {
    for (std::string& out : outs) out += piece;
  };
  for (std::size_t i = 0; i < text.size();) {
    const char c = text[i];
    if (c == '"') {  // a string literal: copied, never expanded
      std::size_t end = i + 1;
      while (end < text.size() && text[end] != '"') end += text[end] == '\\' ? 2 : 1;
      end = std::min(end + 1, text.size());
      append(text.substr(i, end - i));
      i = end;
      continue;
    }
    if (c == '#') return unsupported("a macro's body stringizes or pastes (#, ##)");
    if (c >= '0' && c <= '9') {  // a pp-number (1x, 0x1f): no identifier inside it is expanded
      std::size_t end = i;
      while (end < text.size() && (identifier_char(text[end]) || text[end] == '.')) ++end;
      append(text.substr(i, end - i));
      i = end;
      continue;
    }
    if (!identifier_start(c)) {
      append(text.substr(i, 1));
      ++i;
      continue;
    }
    std::size_t end = i;
    while (end < text.size() && identifier_char(text[end])) ++end;
    const std::string name(text.substr(i, end - i));
    i = end;
    if (std::find(active.begin(), active.end(), name) != active.end()) {
      append(name);
      continue;
    }
    std::size_t next = i;
    while (next < text.size() && blank(text[next])) ++next;
    const bool called = next < text.size() ? text[next] == '(' : in_body;
    if (m_function_like.count(name) != 0 && called) {
      return unsupported(name + " is a function-like macro, which this scan does not expand");
    }
    // Whatever the texts define: NVRTC's own definition may be the one in force.
    if (nvrtc_may_predefine(name) && (called || !nvrtc_predefines_function_like(name))) {
      return unsupported(name + " is a macro NVRTC predefines, whose value no text of the compile holds");
    }
    const auto found = m_objects.find(name);
    if (found == m_objects.end()) {
      if (reserved(name) && m_function_like.count(name) == 0) {
        return unsupported(name + " is defined in no text of the compile (NVRTC may predefine it)");
      }
      append(name);
      continue;
    }
    // The identifier as it is (no definition in force there), then each definition.
    std::vector<std::string> choices{name};
    active.push_back(name);
    for (const std::string& body : found->second) {
      auto expanded = expand(body, active, true);
      if (!expanded) {
        active.pop_back();
        return expanded.error();
      }
      for (std::string& choice : *expanded) {
        if (std::find(choices.begin(), choices.end(), choice) == choices.end()) choices.push_back(std::move(choice));
      }
    }
    active.pop_back();
    if (outs.size() * choices.size() > k_max_macro_candidates) {
      return unsupported("the macros give more than " + std::to_string(k_max_macro_candidates) + " candidate names");
    }
    std::vector<std::string> product;
    product.reserve(outs.size() * choices.size());
    for (const std::string& out : outs) {
      for (const std::string& choice : choices) product.push_back(out + choice);
    }
    outs = std::move(product);
  }
  return outs;
}

common::Result<std::vector<MacroNamedFile>> MacroNamedIncludes::resolve(std::string_view written) const {
  written = trimmed(written);
  const std::string what = "an include named through a macro (\"" + std::string(written) + "\")";
  if (is_identifier(written) && m_objects.count(std::string(written)) == 0) {
    return unsupported(what + ": " + std::string(written) +
                       " is defined as an object-like macro in no text of "
                       "the compile");
  }
  std::vector<std::string> active;
  auto expansions = expand(written, active, false);
  if (!expansions) return unsupported(what + ": " + expansions.error().message);
  std::vector<MacroNamedFile> files;
  for (const std::string& expansion : *expansions) {
    const std::string_view form = trimmed(expansion);
    // The macro not defined where the include stands: NVRTC fails on the line, whatever the disk holds.
    if (is_identifier(form)) continue;
    const bool quoted = form.size() >= 3 && form.front() == '"' && form.back() == '"' &&
                        form.substr(1, form.size() - 2).find('"') == std::string_view::npos;
    const bool bracketed = form.size() >= 3 && form.front() == '<' && form.back() == '>' &&
                           form.substr(1, form.size() - 2).find_first_of("<>") == std::string_view::npos;
    if (!quoted && !bracketed) return unsupported(what + ": it may expand to " + std::string(form) + ", no file name");
    const std::string_view name = form.substr(1, form.size() - 2);
    if (bracketed && std::any_of(name.begin(), name.end(), blank)) {
      return unsupported(what + ": it may expand to " + std::string(form) + ", with blanks inside");
    }
    MacroNamedFile file{std::string(name), bracketed};
    const bool known = std::any_of(files.begin(), files.end(), [&](const MacroNamedFile& other) {
      return other.name == file.name && other.bracketed == file.bracketed;
    });
    if (!known) files.push_back(std::move(file));
  }
  if (files.empty()) return unsupported(what + ": no definition of it names a file");
  return files;
}

}  // namespace jitcache::client::nvrtc
