#include <client/src/nvrtc/directives_codec.hpp>

#include <string>

namespace jitcache::client::nvrtc {

namespace {

// Rationale: no text of a header holds more than this many names or definitions (CCCL's largest
// has a few hundred); a count beyond it is damage, refused before anything is allocated for it.
constexpr std::uint32_t k_max_items = 1u << 20;

void put(proto::ByteWriter& out, const std::string& text) { out.blob32(proto::as_bytes(text)); }

void put(proto::ByteWriter& out, const std::vector<std::string>& texts) {
  out.u32(static_cast<std::uint32_t>(texts.size()));
  for (const std::string& text : texts) put(out, text);
}

bool get(proto::ByteReader& in, std::string& text) {
  auto blob = in.blob32("text");
  if (!blob) return false;
  text.assign(reinterpret_cast<const char*>(blob->data()), blob->size());
  return true;
}

bool get_count(proto::ByteReader& in, std::uint32_t& count) {
  auto read = in.u32("count");
  if (!read || *read > k_max_items || *read > in.remaining()) return false;
  count = *read;
  return true;
}

bool get(proto::ByteReader& in, std::vector<std::string>& texts) {
  std::uint32_t count = 0;
  if (!get_count(in, count)) return false;
  texts.resize(count);
  for (std::string& text : texts) {
    if (!get(in, text)) return false;
  }
  return true;
}

bool get_flag(proto::ByteReader& in, bool& flag) {
  auto read = in.u8("flag");
  if (!read || *read > 1) return false;
  flag = *read == 1;
  return true;
}

}  // namespace

void encode_directives(const IncludeDirectives& directives, proto::ByteWriter& out) {
  put(out, directives.names);
  out.u32(static_cast<std::uint32_t>(directives.bracketed.size()));
  for (const bool bracketed : directives.bracketed) out.u8(bracketed ? 1 : 0);
  out.u32(static_cast<std::uint32_t>(directives.definitions.size()));
  for (const MacroDefinition& definition : directives.definitions) {
    put(out, definition.name);
    out.u8(definition.function_like ? 1 : 0);
    put(out, definition.parameters);
    out.u8(definition.variadic ? 1 : 0);
    put(out, definition.alias);
  }
  out.u32(static_cast<std::uint32_t>(directives.calls.size()));
  for (const MacroCall& call : directives.calls) {
    put(out, call.macro);
    put(out, call.arguments);
    out.i64(call.definition);
    out.u8(call.in_definition ? 1 : 0);
  }
  out.u32(static_cast<std::uint32_t>(directives.objects.size()));
  for (const ObjectMacro& object : directives.objects) {
    put(out, object.name);
    put(out, object.body);
  }
  put(out, directives.function_like);
  put(out, directives.macro_includes);
  put(out, directives.time_macro);
}

std::optional<IncludeDirectives> decode_directives(proto::ByteReader& in) {
  IncludeDirectives out;
  std::uint32_t count = 0;
  if (!get(in, out.names) || !get_count(in, count) || count != out.names.size()) return std::nullopt;
  out.bracketed.resize(count);
  for (std::size_t i = 0; i < count; ++i) {
    bool bracketed = false;
    if (!get_flag(in, bracketed)) return std::nullopt;
    out.bracketed[i] = bracketed;
  }
  if (!get_count(in, count)) return std::nullopt;
  out.definitions.resize(count);
  for (MacroDefinition& definition : out.definitions) {
    if (!get(in, definition.name) || !get_flag(in, definition.function_like) || !get(in, definition.parameters) ||
        !get_flag(in, definition.variadic) || !get(in, definition.alias)) {
      return std::nullopt;
    }
  }
  if (!get_count(in, count)) return std::nullopt;
  out.calls.resize(count);
  for (MacroCall& call : out.calls) {
    if (!get(in, call.macro) || !get(in, call.arguments)) return std::nullopt;
    auto definition = in.i64("definition");
    // The index of a definition of this text, or -1: another is damage the forwarders would
    // follow out of bounds.
    if (!definition || *definition < -1 || *definition >= static_cast<std::int64_t>(out.definitions.size())) {
      return std::nullopt;
    }
    call.definition = static_cast<int>(*definition);
    if (!get_flag(in, call.in_definition)) return std::nullopt;
  }
  if (!get_count(in, count)) return std::nullopt;
  out.objects.resize(count);
  for (ObjectMacro& object : out.objects) {
    if (!get(in, object.name) || !get(in, object.body)) return std::nullopt;
  }
  if (!get(in, out.function_like) || !get(in, out.macro_includes) || !get(in, out.time_macro)) return std::nullopt;
  return out;
}

}  // namespace jitcache::client::nvrtc
