// The Redis Cluster hash slot of a key, as the Cluster specification defines it ("Keys
// distribution model"): CRC16 (the XMODEM variant: polynomial 0x1021, initial value 0, no
// reflection) of the key, or of its hash tag, modulo 16384. The hash tag is what lies between the
// first '{' and the first '}' after it, when that is not empty; otherwise the whole key is hashed.
// The backend names keys "<prefix><space>:{<id>}" so every space of one id lands in one slot.
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <string_view>

namespace jitcache::daemon::remote {

inline constexpr int k_hash_slot_count = 16384;

std::uint16_t crc16_xmodem(std::string_view bytes);

// The part of `key` that is hashed: its hash tag, or all of it.
std::string_view hash_tag(std::string_view key);

// 0..16383.
int key_hash_slot(std::string_view key);

}  // namespace jitcache::daemon::remote
