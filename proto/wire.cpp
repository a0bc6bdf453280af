#include <proto/wire.hpp>

#include <algorithm>
#include <string>

namespace jitcache::proto {

namespace {

template <class T>
void put_le(std::uint8_t* out, T v) {
  for (std::size_t i = 0; i < sizeof(T); ++i) out[i] = static_cast<std::uint8_t>(v >> (8 * i));
}

template <class T>
T get_le(const std::uint8_t* in) {
  T v = 0;
  for (std::size_t i = 0; i < sizeof(T); ++i) v |= static_cast<T>(static_cast<T>(in[i]) << (8 * i));
  return v;
}

bool has_magic(const HeaderBytes& raw) { return std::equal(k_magic.begin(), k_magic.end(), raw.begin()); }

}  // namespace

std::string_view op_name(Op op) { return name_in(k_ops, op); }

std::string_view status_name(Status s) { return name_in(k_statuses, s); }

bool is_implemented_op(Op op) { return op >= Op::hello && op <= Op::nvrtc_compile; }

bool is_known_op(std::uint16_t value) {
  return value >= 1 && std::any_of(k_ops.begin(), k_ops.end(), [value](const NamedValue<Op>& row) {
           return static_cast<std::uint16_t>(row.value) == value;
         });
}

HeaderBytes encode_header(const FrameHeader& header) {
  HeaderBytes raw{};
  std::copy(k_magic.begin(), k_magic.end(), raw.begin());
  put_le(&raw[4], header.version);
  put_le(&raw[6], static_cast<std::uint16_t>(header.op));
  put_le(&raw[8], static_cast<std::uint16_t>(header.status));
  put_le(&raw[10], header.flags);
  put_le(&raw[12], header.request_id);
  put_le(&raw[16], header.payload_length);
  return raw;
}

namespace {
FrameHeader decode_fields(const HeaderBytes& raw) {
  FrameHeader h;
  h.version = get_le<std::uint16_t>(&raw[4]);
  h.op = static_cast<Op>(get_le<std::uint16_t>(&raw[6]));
  h.status = static_cast<Status>(get_le<std::uint16_t>(&raw[8]));
  h.flags = get_le<std::uint16_t>(&raw[10]);
  h.request_id = get_le<std::uint32_t>(&raw[12]);
  h.payload_length = get_le<std::uint64_t>(&raw[16]);
  return h;
}
}  // namespace

std::optional<HeaderError> check_request_header(const HeaderBytes& raw, std::uint64_t max_frame_bytes,
                                                FrameHeader& out) {
  if (!has_magic(raw)) {
    return HeaderError{Status::bad_request, "bad magic: this is not a jitcache protocol frame", 0, 0};
  }
  out = decode_fields(raw);
  const auto op = static_cast<std::uint16_t>(out.op);
  if (out.version != k_protocol_version) {
    return HeaderError{Status::bad_request,
                       "protocol version " + std::to_string(out.version) + " is not supported; this daemon speaks " +
                           std::to_string(k_protocol_version),
                       op, out.request_id};
  }
  if ((out.flags & ~k_known_request_flags) != 0) {
    return HeaderError{Status::bad_request,
                       "reserved header flags are set (" + std::to_string(out.flags & ~k_known_request_flags) + ")", op,
                       out.request_id};
  }
  if (out.status != Status::ok) {
    return HeaderError{Status::bad_request, "a request must carry status 0", op, out.request_id};
  }
  if (out.payload_length > max_frame_bytes) {
    return HeaderError{Status::too_large,
                       "payload of " + std::to_string(out.payload_length) + " bytes exceeds max_frame_bytes (" +
                           std::to_string(max_frame_bytes) + ")",
                       op, out.request_id};
  }
  return std::nullopt;
}

common::Result<FrameHeader> decode_reply_header(const HeaderBytes& raw, std::uint64_t max_payload) {
  if (!has_magic(raw))
    return common::make_error(common::ErrorCode::corrupt, "reply has a bad magic: not a jitcache daemon?");
  FrameHeader h = decode_fields(raw);
  if (h.version != k_protocol_version) {
    return common::make_error(common::ErrorCode::unsupported,
                              "reply uses protocol version " + std::to_string(h.version));
  }
  if (h.payload_length > max_payload) {
    return common::make_error(common::ErrorCode::too_large, "reply payload of " + std::to_string(h.payload_length) +
                                                                " bytes exceeds the client's limit of " +
                                                                std::to_string(max_payload));
  }
  return h;
}

}  // namespace jitcache::proto
