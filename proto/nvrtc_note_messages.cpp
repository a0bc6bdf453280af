#include <proto/nvrtc_note_messages.hpp>

#include <string>

namespace jitcache::proto {

Payload encode(const NvrtcNoteRequest& m) {
  Payload out;
  ByteWriter w(out);
  w.u8(static_cast<std::uint8_t>(m.reason));
  return out;
}

common::Result<NvrtcNoteRequest> decode_nvrtc_note_request(Bytes payload) {
  ByteReader r(payload);
  JITCACHE_TRY_ASSIGN(const std::uint8_t raw, r.u8("reason"));
  JITCACHE_TRY(r.expect_end("NVRTC_NOTE"));
  for (const auto& row : k_nvrtc_uncached_reasons) {
    if (static_cast<std::uint8_t>(row.value) == raw) return NvrtcNoteRequest{row.value};
  }
  return common::make_error(common::ErrorCode::invalid_argument,
                            "NVRTC_NOTE: reason " + std::to_string(raw) + " is not in its table");
}

}  // namespace jitcache::proto
