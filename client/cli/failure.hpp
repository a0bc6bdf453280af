// How a command reports that it failed: one line on stderr, prefixed "jitcache: ", and the exit
// code that says what kind of failure it was. Thread safety: writes to std::cerr; the CLI is
// single-threaded.
#pragma once

#include <string_view>

#include <client/cli/exit_codes.hpp>
#include <common/result.hpp>

namespace jitcache::client::cli {

// Prints "jitcache: <message>" as one line (newlines in the message become spaces, so a daemon's
// message can never break a script that reads the first line; other control characters are escaped,
// terminal_text.hpp) and returns `code`.
ExitCode fail(ExitCode code, std::string_view message);

// For errors from local helpers (file reading, key building): ErrorCode::io is a local I/O failure
// (exit 5), anything else is the user's input (exit 2).
ExitCode fail_local(const common::Error& error);

}  // namespace jitcache::client::cli
