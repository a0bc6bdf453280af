// A regular file opened for reading, with the stat of that very descriptor: what proto's
// mapped_file_xxh3 (the daemon's compile worker digesting its NVRTC) and the client's file_digest
// (client/src/nvrtc/nvrtc_identity.hpp, which keeps a stamp memo on top) both need before they
// read, so that the bytes digested are those of the file whose type and stamp were checked.
// Errors: ErrorCode::unsupported when the path cannot be opened or is not a regular file (a
// directory, a FIFO, a device: its content can change under one stat).
// Thread safety: pure function over the file system; the result is a move-only value.
#pragma once

#include <sys/stat.h>

#include <cstddef>
#include <string>

#include <common/result.hpp>
#include <common/unique_fd.hpp>

namespace jitcache::proto {

struct RegularFile {
  common::UniqueFd fd;
  struct stat st {};
};

common::Result<RegularFile> open_regular_file(const std::string& path);

// The whole content of the regular file at `path`, at most `max_bytes` (ErrorCode::unsupported
// beyond, and for what open_regular_file refuses or a failed read).
common::Result<std::string> read_regular_file(const std::string& path, std::size_t max_bytes);

}  // namespace jitcache::proto
