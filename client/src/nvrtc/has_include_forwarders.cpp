#include <client/src/nvrtc/has_include_forwarders.hpp>

#include <optional>

namespace jitcache::client::nvrtc {

namespace {

// The argument a call passes at `index`: for a variadic parameter, all from there on, as written.
std::optional<std::string> argument_of(const MacroCall& call, std::size_t index, bool variadic) {
  if (index >= call.arguments.size()) return std::nullopt;
  std::string argument = call.arguments[index];
  if (variadic) {
    for (std::size_t i = index + 1; i < call.arguments.size(); ++i) argument += "," + call.arguments[i];
  }
  return argument;
}

std::optional<std::size_t> parameter_index(const MacroDefinition& definition, const std::string& argument) {
  for (std::size_t i = 0; i < definition.parameters.size(); ++i) {
    if (definition.parameters[i] == argument) return i;
  }
  return std::nullopt;
}

std::string written(const MacroCall& call) {
  std::string out = call.macro + "(";
  for (std::size_t i = 0; i < call.arguments.size(); ++i) out += (i == 0 ? "" : ", ") + call.arguments[i];
  return out + ")";
}

}  // namespace

HasIncludeForwarders::HasIncludeForwarders() {
  m_forwarders["__has_include"][0] = false;
  m_forwarders["__has_include_next"][0] = false;
}

void HasIncludeForwarders::add(const IncludeDirectives& text) {
  for (const MacroCall& call : text.calls) {
    if (call.definition >= 0)
      m_passing.push_back({&call, &text.definitions[static_cast<std::size_t>(call.definition)]});
  }
  for (const MacroDefinition& definition : text.definitions) {
    if (!definition.alias.empty()) m_aliases.push_back(&definition);
  }
}

bool HasIncludeForwarders::learn(const std::string& macro, std::size_t index, bool variadic) {
  auto [it, inserted] = m_forwarders[macro].try_emplace(index, variadic);
  if (!inserted && variadic && !it->second) {
    it->second = true;
    return true;
  }
  return inserted;
}

// Rationale: a fixed point over every definition seen, because a forwarder may be defined in a text
// read after one that defines a macro forwarding to it (the scan follows names, not the order the
// preprocessor would meet them). Few definitions forward at all (include_directives.cpp keeps only
// those that pass a parameter on), so the rounds are cheap.
bool HasIncludeForwarders::settle() {
  bool learned_any = false;
  for (bool learned = true; learned;) {
    learned = false;
    for (const auto& [call, definition] : m_passing) {
      const auto found = m_forwarders.find(call->macro);
      if (found == m_forwarders.end()) continue;
      const Forwarded forwarded = found->second;  // a copy: learn() may add to this very entry
      for (const auto& [index, variadic] : forwarded) {
        const std::optional<std::string> argument = argument_of(*call, index, variadic);
        if (!argument) continue;
        const std::optional<std::size_t> parameter = parameter_index(*definition, *argument);
        if (!parameter) continue;
        const bool rest = definition->variadic && *parameter + 1 == definition->parameters.size();
        learned = learn(definition->name, *parameter, rest) || learned;
      }
    }
    for (const MacroDefinition* definition : m_aliases) {
      const auto found = m_forwarders.find(definition->alias);
      if (found == m_forwarders.end()) continue;
      const Forwarded forwarded = found->second;
      for (const auto& [index, variadic] : forwarded) learned = learn(definition->name, index, variadic) || learned;
    }
    learned_any = learned_any || learned;
  }
  return learned_any;
}

common::Result<std::vector<ForwardedProbe>> HasIncludeForwarders::probes(const IncludeDirectives& text) const {
  std::vector<ForwardedProbe> names;
  for (const MacroCall& call : text.calls) {
    // `APPLY(F)(<file>)`: a forwarder passed on by name probes where this scan cannot see.
    for (const std::string& argument : call.arguments) {
      if (call.macro == "defined" || m_forwarders.count(argument) == 0) continue;
      return common::make_error(common::ErrorCode::unsupported, "\"" + written(call) + "\" passes on " + argument +
                                                                    ", which applies __has_include to its argument");
    }
    const auto found = m_forwarders.find(call.macro);
    if (found == m_forwarders.end()) continue;
    for (const auto& [index, variadic] : found->second) {
      const std::optional<std::string> argument = argument_of(call, index, variadic);
      // Forwarded on by the macro whose body holds the call: probed where that macro is called.
      if (argument && call.definition >= 0 &&
          parameter_index(text.definitions[static_cast<std::size_t>(call.definition)], *argument)) {
        continue;
      }
      std::string name = argument ? literal_file_name(*argument) : std::string();
      if (name.empty()) {
        const std::string what = found->first.rfind("__has_include", 0) == 0
                                     ? found->first
                                     : found->first + " (a macro that applies __has_include to its argument)";
        return common::make_error(common::ErrorCode::unsupported,
                                  what + " names its file through a macro: \"" + written(call) + "\"");
      }
      const bool bracketed = argument->front() == '<';
      names.push_back(ForwardedProbe{std::move(name), call.in_definition, bracketed});
    }
  }
  return names;
}

common::Result<std::vector<std::string>> included_names_of(const IncludeDirectives& text) {
  HasIncludeForwarders forwarders;
  forwarders.add(text);
  forwarders.settle();
  auto probed = forwarders.probes(text);
  JITCACHE_TRY(probed);
  std::vector<std::string> names = text.names;
  for (ForwardedProbe& probe : *probed) names.push_back(std::move(probe.name));
  return names;
}

}  // namespace jitcache::client::nvrtc
