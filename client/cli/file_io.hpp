// Reading input files and writing output files for the CLI. Only regular files are read. Output to
// a file is written atomically: a reader (or a crash) sees either the old file or the complete new
// one, never a partial image a loader might try to run; output to standard output, a device or a
// FIFO is written into directly, never replaced. Errors carry ErrorCode::io and name the path.
// Thread safety: free functions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <common/result.hpp>
#include <proto/digest.hpp>

namespace jitcache::client::cli {

// The file's bytes exactly as on disk (no newline or encoding translation: they are digested).
// Anything but a regular file (a FIFO, a device, a socket, a directory) is refused at once: a FIFO
// could keep the CLI waiting forever and a device such as /dev/zero never ends.
common::Result<std::vector<std::uint8_t>> read_whole_file(const std::string& path);

// The -o value that means standard output.
inline constexpr const char* k_standard_output = "-";

// Writes an output (get -o): to standard output for "-"; into an existing file that is not a
// regular file (/dev/null, a FIFO, a device), without replacing it, a FIFO no process reads being
// an error rather than a wait; otherwise with write_file_atomically. A write error (ENOSPC on
// /dev/full, EPIPE, EIO) is an error, and a terminal is refused: an image is binary.
common::Result<void> write_output(const std::string& path, proto::Bytes bytes);

// Writes `bytes` to a temporary file in the same directory, fsyncs it, renames it over `path` and
// fsyncs the directory; removes the temporary file on any failure. The new file gets the usual
// 0666 & ~umask permissions.
common::Result<void> write_file_atomically(const std::string& path, proto::Bytes bytes);

}  // namespace jitcache::client::cli
