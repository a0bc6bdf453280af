// The CLI's --json output (docs/cli.md "JSON output"): one JSON document on stdout per command,
// with raw numbers, full hex digests and both ISO-8601 and millisecond timestamps, so scripts
// never parse the human text. Field order is fixed (ordered_json) so diffs of the output are
// stable. Thread safety: free functions.
#pragma once

#include <ostream>

#include <nlohmann/json.hpp>

#include <proto/messages.hpp>

namespace jitcache::client::cli {

using Json = nlohmann::ordered_json;

// Every field of an entry: key_id, content_digest, key fields, namespace, producer, codec,
// sizes, checksum, times and counters, and whether (since when) it is quarantined.
Json entry_to_json(const proto::EntryInfo& entry);

// The daemon's flat counters, except that every "errors.<status>" value goes into the nested
// object "errors_by_status" (present even when empty, so scripts can index it unconditionally).
Json stats_to_json(const proto::StatsReply& stats);

// Prints the document, indented, followed by a newline. Invalid UTF-8 in a daemon-supplied string
// is replaced (U+FFFD) rather than thrown on: output must not fail because a producer name is odd.
// The output is ASCII: control characters and everything beyond U+007F are written as \uXXXX
// escapes, so a document shown on a terminal cannot carry an escape sequence (terminal_text.hpp
// says why); every JSON parser reads them back as the same text.
void print_json(std::ostream& out, const Json& document);

}  // namespace jitcache::client::cli
