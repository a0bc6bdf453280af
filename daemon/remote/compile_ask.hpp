// A compile ask (docs/remote-layout.md "Asks"): what a consumer hands the builders so that one of
// them compiles a key for it, the key's fields and its PTX, as one value under `ask/<key id>`.
// A builder believes none of it: decode_compile_ask checks the fields as a COMPILE's are checked,
// and hashes the PTX it received itself; an ask whose PTX is not the content digest it claims is
// refused, so the entry the builder compiles is one it compiled from source it hashed itself.
// Thread safety: pure functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <proto/digest.hpp>
#include <proto/key.hpp>

namespace jitcache::daemon::remote {

inline constexpr std::uint16_t k_compile_ask_version = 1;
// Rationale: an ask's value at most: the PTX is a zstd frame, and PTX compresses about ten to one
// (tests/data/cub_kernels.ptx: 3.2 MB to 459 KB), so this carries PTX of some 40 MB, past the
// default compile_max_ptx (32 MiB); a larger ask is not sent, and a builder refuses it unread past
// its length, so one ask cannot make a builder read more (docs/remote-layout.md "Asks").
inline constexpr std::size_t k_max_compile_ask_bytes = 4u << 20;

struct CompileAsk {
  proto::KeyFields key;
  std::vector<std::uint8_t> ptx;
};

// The value for `key` (its content digest the caller's of `ptx`); empty when it would be longer
// than k_max_compile_ask_bytes.
std::string encode_compile_ask(const proto::KeyFields& key, proto::Bytes ptx);

// The ask, when `value` is a well-formed ask of this version whose key passes proto::validate_key
// and whose PTX (at most max_ptx bytes) has the key's content digest; otherwise why not, in words.
std::variant<CompileAsk, std::string> decode_compile_ask(std::string_view value, std::uint64_t max_ptx);

}  // namespace jitcache::daemon::remote
