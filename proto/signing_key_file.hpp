// The files that hold signing keys (signing.hpp): reading one with the checks its kind needs, and
// writing a new pair without ever replacing a file. The PEM inside is signing.cpp's business; this
// unit only moves bytes between the file system and memory.
// Thread safety: free functions, no shared state.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include <common/result.hpp>

namespace jitcache::proto {

// Rationale: a PEM ed25519 key is about 120 bytes; 64 KiB leaves room for comments and chains of
// other tools while keeping a mistaken path (a log, an image, /dev/zero behind a symlink) from
// being read whole.
inline constexpr std::size_t k_max_key_file_bytes = 64 * 1024;

enum class KeyFileKind : std::uint8_t {
  // Opened without following a symbolic link; it must be a regular file owned by the effective
  // uid, with no group or other permission bits (ErrorCode::forbidden otherwise, saying how to fix it).
  private_key,
  // Any regular file the caller can read (a public key is no secret).
  public_key,
};

// The file's bytes, at most k_max_key_file_bytes (too_large beyond). Errors name the file.
common::Result<std::string> read_key_file(const std::string& path, KeyFileKind kind);

// Writes PREFIX.key (mode 0600) and PREFIX.pub (mode 0644, less the umask), each created with
// O_EXCL: an existing file of either name is refused (ErrorCode::io, naming it) and nothing is
// written. Both are written and synced, or neither is left behind.
common::Result<void> write_key_pair_files(const std::string& prefix, std::string_view private_pem,
                                          std::string_view public_pem);

}  // namespace jitcache::proto
