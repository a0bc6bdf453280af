#include <proto/compile_messages.hpp>

#include <algorithm>
#include <common/result.hpp>
#include <utility>
#include <vector>

namespace jitcache::proto {

namespace {

std::string_view cut(std::string_view s, std::size_t max) { return s.substr(0, std::min(s.size(), max)); }

template <class T>
common::Result<T> finish(ByteReader& r, T value, std::string_view what) {
  JITCACHE_TRY(r.expect_end(what));
  return value;
}

}  // namespace

// Rationale: as in messages.cpp, a local macro keeps the field order readable against PROTOCOL.md.
#define JC_READ(var, expr)                        \
  auto var##_result = (expr);                     \
  if (!var##_result) return var##_result.error(); \
  auto var = std::move(*var##_result) /* moved, not copied: a decoded string is one allocation */

KeyFields key_of(const CompileRequest& request, const Digest256& content) {
  KeyFields key;
  key.key_schema = request.key_schema;
  key.content = content;
  key.arch = request.arch;
  key.driver_api = request.driver_api;
  key.driver_build = request.driver_build;
  key.options = request.options;
  return key;
}

Payload encode_compile_request_head(const CompileRequest& m) {
  Payload out;
  ByteWriter w(out);
  w.u16(m.key_schema);
  w.str16(cut(m.arch, k_max_arch_length));
  w.u32(m.driver_api);
  w.str16(cut(m.driver_build, k_max_driver_build_length));
  w.str16(cut(m.options, k_max_options_length));
  w.u8(static_cast<std::uint8_t>(m.priority));
  if (m.link_inputs.empty()) {
    w.blob32_length(static_cast<std::uint32_t>(m.ptx.size()));
    return out;
  }
  // Rationale: behind capability bit 9 the request continues after an empty `ptx` (PROTOCOL.md §7:
  // a field is appended only behind a capability bit); the inputs are copied into the head, which
  // then is the whole request.
  w.blob32(Bytes{});
  w.u16(static_cast<std::uint16_t>(m.link_inputs.size()));
  for (const CompileLinkInput& input : m.link_inputs) {
    w.u8(static_cast<std::uint8_t>(input.kind));
    w.blob32(input.data);
  }
  return out;
}

Payload encode(const CompileRequest& m) {
  Payload out = encode_compile_request_head(m);
  if (m.link_inputs.empty()) out.insert(out.end(), m.ptx.begin(), m.ptx.end());
  return out;
}

namespace {

std::vector<LinkInputView> link_views(const CompileRequest& request) {
  std::vector<LinkInputView> views;
  views.reserve(request.link_inputs.size());
  for (const CompileLinkInput& input : request.link_inputs) views.push_back(LinkInputView{input.kind, input.data, {}});
  return views;
}

common::Result<std::vector<CompileLinkInput>> decode_link_inputs(ByteReader& r) {
  JC_READ(count, r.u16("link_count"));
  if (count == 0 || count > k_max_compile_link_inputs) {
    return common::make_error(common::ErrorCode::invalid_argument, "COMPILE link_count " + std::to_string(count) +
                                                                       " is not 1 to " +
                                                                       std::to_string(k_max_compile_link_inputs));
  }
  std::vector<CompileLinkInput> inputs;
  inputs.reserve(count);
  for (unsigned i = 0; i < count; ++i) {
    JC_READ(kind, r.u8("link input kind"));
    if (!is_link_input_kind(kind)) {
      return common::make_error(common::ErrorCode::invalid_argument, "COMPILE link input " + std::to_string(i) +
                                                                         " has kind " + std::to_string(kind) +
                                                                         ", which is not a link input kind");
    }
    JC_READ(data, r.blob32("link input data"));
    inputs.push_back(CompileLinkInput{static_cast<LinkInputKind>(kind), data});
  }
  return inputs;
}

}  // namespace

Digest256 link_content_of(const CompileRequest& request) {
  const auto views = link_views(request);
  return link_content_digest(views);
}

Checksum128 link_content_fast_of(const CompileRequest& request) {
  const auto views = link_views(request);
  return link_content_fast(views);
}

common::Result<CompileRequest> decode_compile_request(Bytes payload) {
  ByteReader r(payload);
  CompileRequest m;
  JC_READ(schema, r.u16("key_schema"));
  JC_READ(arch, r.str16("arch", k_max_arch_length));
  JC_READ(driver_api, r.u32("driver_api"));
  JC_READ(driver_build, r.str16("driver_build", k_max_driver_build_length));
  JC_READ(options, r.str16("options", k_max_options_length));
  JC_READ(priority, r.u8("priority"));
  JC_READ(ptx, r.blob32("ptx"));
  if (priority > static_cast<std::uint8_t>(CompilePriority::warm)) {
    return common::make_error(common::ErrorCode::invalid_argument,
                              "COMPILE priority " + std::to_string(priority) + " is not 0 (interactive) or 1 (warm)");
  }
  m.key_schema = schema;
  m.arch = arch;
  m.driver_api = driver_api;
  m.driver_build = driver_build;
  m.options = options;
  m.priority = static_cast<CompilePriority>(priority);
  m.ptx = ptx;
  if (r.remaining() > 0) {
    if (!ptx.empty()) {
      return common::make_error(common::ErrorCode::invalid_argument,
                                "COMPILE carries both a PTX and link inputs after it");
    }
    auto inputs = decode_link_inputs(r);
    JITCACHE_TRY(inputs);
    m.link_inputs = std::move(*inputs);
  }
  return finish(r, std::move(m), "COMPILE");
}

Payload encode_compile_reply_head(CompileOrigin origin, const EntryInfo& info, std::uint32_t image_size) {
  Payload out;
  ByteWriter w(out);
  w.u8(static_cast<std::uint8_t>(origin));
  encode_entry_info(w, info);
  w.blob32_length(image_size);
  return out;
}

Payload encode(const CompileReply& m) {
  Payload out = encode_compile_reply_head(m.origin, m.info, static_cast<std::uint32_t>(m.image.size()));
  out.insert(out.end(), m.image.begin(), m.image.end());
  return out;
}

common::Result<CompileReply> decode_compile_reply(Bytes payload) {
  ByteReader r(payload);
  CompileReply m;
  JC_READ(origin, r.u8("origin"));
  if (origin > static_cast<std::uint8_t>(CompileOrigin::stored)) {
    return common::make_error(common::ErrorCode::invalid_argument,
                              "COMPILE reply origin " + std::to_string(origin) + " is not 0 (compiled) or 1 (stored)");
  }
  JC_READ(info, decode_entry_info(r));
  JC_READ(image, r.blob32("image"));
  m.origin = static_cast<CompileOrigin>(origin);
  m.info = std::move(info);
  m.image = image;
  return finish(r, std::move(m), "COMPILE reply");
}

Payload encode(const CompileErrorReply& m) {
  Payload out;
  ByteWriter w(out);
  w.str16(cut(m.message, k_max_message_length));
  w.blob32(as_bytes(cut(m.log, k_max_compile_log_length)));
  return out;
}

common::Result<CompileErrorReply> decode_compile_error_reply(Bytes payload) {
  ByteReader r(payload);
  CompileErrorReply m;
  JC_READ(message, r.str16("message", k_max_message_length));
  JC_READ(log, r.blob32("log"));
  if (log.size() > k_max_compile_log_length) {
    return common::make_error(common::ErrorCode::too_large, "the compile log is " + std::to_string(log.size()) +
                                                                " bytes, more than " +
                                                                std::to_string(k_max_compile_log_length));
  }
  m.message = std::string(message);
  m.log.assign(reinterpret_cast<const char*>(log.data()), log.size());
  return finish(r, std::move(m), "COMPILE error reply");
}

#undef JC_READ

}  // namespace jitcache::proto
