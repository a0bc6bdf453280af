#include <proto/nvrtc_compile_messages.hpp>

#include <string>

namespace jitcache::proto {

namespace {

common::Error invalid(std::string message) {
  return common::make_error(common::ErrorCode::invalid_argument, std::move(message));
}

common::Result<std::string> read_string(ByteReader& r, std::string_view field) {
  auto text = r.str16(field, k_max_nvrtc_string);
  JITCACHE_TRY(text);
  return std::string(*text);
}

common::Result<std::string> read_blob(ByteReader& r, std::string_view field) {
  auto blob = r.blob32(field);
  JITCACHE_TRY(blob);
  return std::string(reinterpret_cast<const char*>(blob->data()), blob->size());
}

common::Result<std::size_t> read_count(ByteReader& r, std::string_view field, std::size_t max) {
  auto count = r.u16(field);
  JITCACHE_TRY(count);
  if (*count > max)
    return invalid(std::string(field) + " " + std::to_string(*count) + " is over " + std::to_string(max));
  return static_cast<std::size_t>(*count);
}

}  // namespace

std::uint64_t NvrtcProgramText::bytes() const {
  std::uint64_t total = name.size() + source.size();
  for (const auto& [header, content] : headers) total += header.size() + content.size();
  for (const std::string& option : options) total += option.size();
  for (const std::string& expression : name_expressions) total += expression.size();
  return total;
}

bool operator==(const NvrtcIdentity& a, const NvrtcIdentity& b) {
  return a.major == b.major && a.minor == b.minor && a.library == b.library && a.builtins == b.builtins;
}

void encode_nvrtc_identity(ByteWriter& w, const NvrtcIdentity& identity) {
  w.u16(static_cast<std::uint16_t>(identity.major));
  w.u16(static_cast<std::uint16_t>(identity.minor));
  w.checksum(identity.library);
  w.checksum(identity.builtins);
}

common::Result<NvrtcIdentity> decode_nvrtc_identity(ByteReader& r) {
  NvrtcIdentity identity;
  JITCACHE_TRY_ASSIGN(const std::uint16_t major, r.u16("nvrtc major"));
  JITCACHE_TRY_ASSIGN(const std::uint16_t minor, r.u16("nvrtc minor"));
  JITCACHE_TRY_ASSIGN(identity.library, r.checksum("nvrtc library digest"));
  JITCACHE_TRY_ASSIGN(identity.builtins, r.checksum("nvrtc builtins digest"));
  identity.major = major;
  identity.minor = minor;
  return identity;
}

void encode_nvrtc_program(ByteWriter& w, const NvrtcProgramText& program) {
  w.str16(program.name);
  w.blob32(as_bytes(program.source));
  w.u16(static_cast<std::uint16_t>(program.headers.size()));
  for (const auto& [name, content] : program.headers) {
    w.str16(name);
    w.blob32(as_bytes(content));
  }
  w.u16(static_cast<std::uint16_t>(program.options.size()));
  for (const std::string& option : program.options) w.str16(option);
  w.u16(static_cast<std::uint16_t>(program.name_expressions.size()));
  for (const std::string& expression : program.name_expressions) w.str16(expression);
}

common::Result<NvrtcProgramText> decode_nvrtc_program(ByteReader& r) {
  NvrtcProgramText program;
  JITCACHE_TRY_ASSIGN(program.name, read_string(r, "program name"));
  JITCACHE_TRY_ASSIGN(program.source, read_blob(r, "source"));
  JITCACHE_TRY_ASSIGN(const std::size_t headers, read_count(r, "header count", k_max_nvrtc_headers));
  for (std::size_t i = 0; i < headers; ++i) {
    JITCACHE_TRY_ASSIGN(std::string name, read_string(r, "header name"));
    JITCACHE_TRY_ASSIGN(std::string content, read_blob(r, "header content"));
    program.headers.emplace_back(std::move(name), std::move(content));
  }
  JITCACHE_TRY_ASSIGN(const std::size_t options, read_count(r, "option count", k_max_nvrtc_options));
  for (std::size_t i = 0; i < options; ++i) {
    JITCACHE_TRY_ASSIGN(std::string option, read_string(r, "option"));
    program.options.push_back(std::move(option));
  }
  JITCACHE_TRY_ASSIGN(const std::size_t expressions, read_count(r, "name expression count", k_max_nvrtc_expressions));
  for (std::size_t i = 0; i < expressions; ++i) {
    JITCACHE_TRY_ASSIGN(std::string expression, read_string(r, "name expression"));
    program.name_expressions.push_back(std::move(expression));
  }
  return program;
}

Payload encode(const NvrtcCompileRequest& m) {
  Payload out;
  out.reserve(m.program.bytes() + m.include_record.size() + 512);
  ByteWriter w(out);
  encode_nvrtc_identity(w, m.identity);
  encode_key(w, m.claimed_key);
  encode_nvrtc_program(w, m.program);
  w.blob32(as_bytes(m.include_record));
  return out;
}

common::Result<NvrtcCompileRequest> decode_nvrtc_compile_request(Bytes payload) {
  ByteReader r(payload);
  NvrtcCompileRequest m;
  JITCACHE_TRY_ASSIGN(m.identity, decode_nvrtc_identity(r));
  JITCACHE_TRY_ASSIGN(m.claimed_key, decode_key(r));
  JITCACHE_TRY_ASSIGN(m.program, decode_nvrtc_program(r));
  JITCACHE_TRY_ASSIGN(m.include_record, read_blob(r, "include record"));
  JITCACHE_TRY(r.expect_end("NVRTC_COMPILE"));
  return m;
}

Payload encode(const NvrtcCompileReply& m) {
  Payload out;
  ByteWriter w(out);
  w.u8(static_cast<std::uint8_t>(m.origin));
  w.blob32(Bytes(m.result));
  return out;
}

common::Result<NvrtcCompileReply> decode_nvrtc_compile_reply(Bytes payload) {
  ByteReader r(payload);
  NvrtcCompileReply m;
  JITCACHE_TRY_ASSIGN(const std::uint8_t origin, r.u8("origin"));
  if (origin > static_cast<std::uint8_t>(NvrtcCompileOrigin::stored)) {
    return invalid("NVRTC_COMPILE reply: origin " + std::to_string(origin));
  }
  m.origin = static_cast<NvrtcCompileOrigin>(origin);
  JITCACHE_TRY_ASSIGN(const Bytes result, r.blob32("result"));
  m.result.assign(result.begin(), result.end());
  JITCACHE_TRY(r.expect_end("NVRTC_COMPILE reply"));
  return m;
}

}  // namespace jitcache::proto
