// Human-readable renderings for the CLI's text output: sizes, ages, timestamps and namespaces.
// JSON output never uses these (it carries raw numbers). Thread safety: free functions.
#pragma once

#include <cstdint>
#include <string>

namespace jitcache::client::cli {

// Binary units with one decimal past 1 KiB: "512 B", "1.5 KiB", "64.0 MiB".
std::string human_bytes(std::uint64_t bytes);

// How long before `now_ms` the moment `then_ms` was, in its largest whole unit: "12s ago",
// "5m ago", "3h ago", "2d ago"; "never" for 0 (the store's "not yet"), "just now" when it lies in
// the future by clock skew.
std::string human_age(std::int64_t then_ms, std::int64_t now_ms);

// ISO-8601 in UTC with milliseconds: "2025-06-01T12:34:56.789Z".
std::string iso8601_utc(std::int64_t unix_ms);

// Unix time now, in milliseconds.
std::int64_t now_unix_ms();

// "shared" for namespace 0, else "uid <n>" (a namespace is its owner's uid).
std::string namespace_name(std::uint32_t namespace_id);

// A duration in microseconds as "0.123 ms" or "1.234 s".
std::string human_duration_us(std::uint64_t microseconds);

}  // namespace jitcache::client::cli
