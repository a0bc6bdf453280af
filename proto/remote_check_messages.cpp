#include <proto/remote_check_messages.hpp>

#include <algorithm>
#include <string>

namespace jitcache::proto {

namespace {

std::string_view cut(std::string_view s, std::size_t max) { return s.substr(0, std::min(s.size(), max)); }

common::Error malformed(std::string message) {
  return common::make_error(common::ErrorCode::invalid_argument, "REMOTE_CHECK reply: " + std::move(message));
}

// A value of a numbered vocabulary, refused when outside its table.
template <class T, std::size_t N>
common::Result<T> read_named(ByteReader& r, const std::array<NamedValue<T>, N>& table, std::string_view field) {
  JITCACHE_TRY_ASSIGN(const std::uint8_t raw, r.u8(field));
  for (const NamedValue<T>& row : table) {
    if (static_cast<std::uint8_t>(row.value) == raw) return row.value;
  }
  return malformed(std::string(field) + " " + std::to_string(raw) + " is not one of 0, 1, 2");
}

common::Result<std::string> read_signer(ByteReader& r, std::string_view field, bool allow_empty) {
  JITCACHE_TRY_ASSIGN(const std::string_view text, r.str16(field, k_signer_hex_length));
  if (!(allow_empty && text.empty()) && !is_signer_hex(text)) {
    return malformed(std::string(field) + " is not " + std::to_string(k_signer_hex_length) + " lower-case hex digits");
  }
  return std::string(text);
}

common::Result<RemoteCheckRemote> read_remote(ByteReader& r) {
  RemoteCheckRemote remote;
  JITCACHE_TRY_ASSIGN(const std::string_view name, r.str16("name", k_max_remote_name_length));
  JITCACHE_TRY_ASSIGN(remote.breaker, read_named(r, k_breaker_states, "breaker"));
  JITCACHE_TRY_ASSIGN(remote.reachable, read_named(r, k_probe_answers, "reachable"));
  JITCACHE_TRY_ASSIGN(remote.writable, read_named(r, k_probe_answers, "writable"));
  JITCACHE_TRY_ASSIGN(remote.leases, read_named(r, k_lease_supports, "leases"));
  JITCACHE_TRY_ASSIGN(remote.latency_us, r.u64("latency_us"));
  JITCACHE_TRY_ASSIGN(const std::string_view message, r.str16("message", k_max_remote_message_length));
  remote.name = name;
  remote.message = message;
  return remote;
}

}  // namespace

std::string_view breaker_state_name(BreakerState state) { return name_in(k_breaker_states, state); }
std::string_view probe_answer_name(ProbeAnswer answer) { return name_in(k_probe_answers, answer); }
std::string_view lease_support_name(LeaseSupport support) { return name_in(k_lease_supports, support); }

bool is_signer_hex(std::string_view text) {
  return text.size() == k_signer_hex_length &&
         std::all_of(text.begin(), text.end(), [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

Payload encode(const RemoteCheckRequest& m) { return Payload{static_cast<std::uint8_t>(m.probe ? 1 : 0)}; }

Payload encode(const RemoteCheckReply& m) {
  Payload out;
  ByteWriter w(out);
  w.str16(cut(m.signer, k_signer_hex_length));
  w.str16(cut(m.signing_message, k_max_remote_message_length));
  const std::size_t trusted = std::min(m.trusted.size(), k_max_remote_check_trusted);
  w.u16(static_cast<std::uint16_t>(trusted));
  for (std::size_t i = 0; i < trusted; ++i) w.str16(cut(m.trusted[i], k_signer_hex_length));
  const std::size_t remotes = std::min(m.remotes.size(), k_max_remote_check_remotes);
  w.u16(static_cast<std::uint16_t>(remotes));
  for (std::size_t i = 0; i < remotes; ++i) {
    const RemoteCheckRemote& remote = m.remotes[i];
    w.str16(cut(remote.name, k_max_remote_name_length));
    w.u8(static_cast<std::uint8_t>(remote.breaker));
    w.u8(static_cast<std::uint8_t>(remote.reachable));
    w.u8(static_cast<std::uint8_t>(remote.writable));
    w.u8(static_cast<std::uint8_t>(remote.leases));
    w.u64(remote.latency_us);
    w.str16(cut(remote.message, k_max_remote_message_length));
  }
  return out;
}

common::Result<RemoteCheckRequest> decode_remote_check_request(Bytes payload) {
  ByteReader r(payload);
  JITCACHE_TRY_ASSIGN(const std::uint8_t probe, r.u8("probe"));
  if (probe > 1) {
    return common::make_error(common::ErrorCode::invalid_argument,
                              "REMOTE_CHECK probe " + std::to_string(probe) + " is not 0 (what is known) or 1 (probe)");
  }
  JITCACHE_TRY(r.expect_end("REMOTE_CHECK"));
  return RemoteCheckRequest{probe == 1};
}

common::Result<RemoteCheckReply> decode_remote_check_reply(Bytes payload) {
  ByteReader r(payload);
  RemoteCheckReply m;
  JITCACHE_TRY_ASSIGN(m.signer, read_signer(r, "signer", true));
  JITCACHE_TRY_ASSIGN(const std::string_view signing_message, r.str16("signing_message", k_max_remote_message_length));
  m.signing_message = signing_message;
  JITCACHE_TRY_ASSIGN(const std::uint16_t trusted, r.u16("trusted_count"));
  if (trusted > k_max_remote_check_trusted) {
    return malformed("lists " + std::to_string(trusted) + " trusted keys (at most " +
                     std::to_string(k_max_remote_check_trusted) + ")");
  }
  for (std::uint16_t i = 0; i < trusted; ++i) {
    JITCACHE_TRY_ASSIGN(std::string signer, read_signer(r, "trusted signer", false));
    m.trusted.push_back(std::move(signer));
  }
  JITCACHE_TRY_ASSIGN(const std::uint16_t remotes, r.u16("remote_count"));
  if (remotes > k_max_remote_check_remotes) {
    return malformed("lists " + std::to_string(remotes) + " remotes (at most " +
                     std::to_string(k_max_remote_check_remotes) + ")");
  }
  for (std::uint16_t i = 0; i < remotes; ++i) {
    JITCACHE_TRY_ASSIGN(RemoteCheckRemote remote, read_remote(r));
    m.remotes.push_back(std::move(remote));
  }
  JITCACHE_TRY(r.expect_end("REMOTE_CHECK reply"));
  return m;
}

}  // namespace jitcache::proto
