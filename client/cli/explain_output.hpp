// How `jitcache explain` and `jitcache misses` print what EXPLAIN and MISSES answered
// (docs/cli.md "explain", "misses"): a sentence per finding, with the fields that differ beneath
// it, and the same as JSON. Daemon-supplied text goes through terminal_text (terminal_text.hpp).
// Thread safety: free functions.
#pragma once

#include <ostream>
#include <string>

#include <proto/explain_messages.hpp>

#include <client/cli/json_output.hpp>

namespace jitcache::client::cli {

// The reporter uid the daemon does not show (daemon/ops/explain_request.hpp).
inline constexpr std::uint32_t k_uid_not_shown = 0xFFFFFFFFu;

// "miss: key 0c5822...", then one finding per line. `title` names what was explained (a source
// file, a key id, a load of a report).
void print_explanation(std::ostream& out, const std::string& title, const proto::ExplainReply& reply);
Json explanation_to_json(const proto::ExplainReply& reply);

void print_misses(std::ostream& out, const proto::MissesReply& reply);
Json misses_to_json(const proto::MissesReply& reply);

}  // namespace jitcache::client::cli
