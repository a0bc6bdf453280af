// The check for options that take a whole number (put --compile-time-us, ls --limit, verify
// --timeout): decimal digits only, within [min, max], so that a negative or an overflowing value is
// a usage error (exit 2) rather than a number the user did not type.
// Rationale: CLI11 2.1 converts an unsigned option with strtoull, which reads "-5" as 2^64 - 5,
// saturates "99999999999999999999" to 2^64 - 1 and takes "0x10" as hex and "010" as octal; the
// check runs on the text before that conversion.
// Thread safety: the validator is a value; use it from the CLI's one thread.
#pragma once

#include <cstdint>

#include <CLI/CLI.hpp>

namespace jitcache::client::cli {

CLI::Validator whole_number(std::uint64_t min, std::uint64_t max);

}  // namespace jitcache::client::cli
