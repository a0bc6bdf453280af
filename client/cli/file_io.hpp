// Reading input files and writing output files for the CLI. Output is written atomically: a
// reader (or a crash) sees either the old file or the complete new one, never a partial image a
// loader might try to run. Errors carry ErrorCode::io and name the path. Thread safety: free
// functions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <jitcache/proto/digest.hpp>
#include <jitcache/proto/result.hpp>

namespace jitcache::client::cli {

// The file's bytes exactly as on disk (no newline or encoding translation: they are digested).
proto::Result<std::vector<std::uint8_t>> read_whole_file(const std::string& path);

// Writes `bytes` to a temporary file in the same directory, fsyncs it, renames it over `path` and
// fsyncs the directory; removes the temporary file on any failure. The new file gets the usual
// 0666 & ~umask permissions.
proto::Result<void> write_file_atomically(const std::string& path, proto::Bytes bytes);

}  // namespace jitcache::client::cli
