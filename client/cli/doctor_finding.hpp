// One finding of `jitcache doctor` (docs/cli.md "doctor"): which check made it, how bad it is, what
// was found and what to do about it; and the report a list of them makes, as text or JSON, with the
// exit status of the worst. Thread safety: values and free functions.
#pragma once

#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <client/cli/exit_codes.hpp>
#include <client/cli/json_output.hpp>

namespace jitcache::client::cli {

enum class Severity { ok = 0, warning = 1, error = 2 };

std::string_view severity_name(Severity severity);  // "ok", "warning", "error"

struct Finding {
  std::string check;  // "socket", "daemon", "driver", ... (docs/cli.md "doctor" lists them)
  Severity severity = Severity::ok;
  std::string message;            // what was found: one line
  std::string fix;                // what to do about it; empty when there is nothing to do
  Json details = Json::object();  // the raw figures behind the message, for --json

  Finding(std::string check_name, Severity level, std::string what, std::string how = {})
      : check(std::move(check_name)), severity(level), message(std::move(what)), fix(std::move(how)) {}
};

// Severity::ok for no findings.
Severity worst_severity(const std::vector<Finding>& findings);

// ok 0, warning ExitCode::doctor_warning, error ExitCode::doctor_error.
ExitCode exit_code_for(Severity severity);

// One line per finding, "<severity> <check> <message>", its fix on the line underneath, then a
// line that counts them. Text from the daemon and the file system passes through terminal_text.
void print_findings(std::ostream& out, const std::vector<Finding>& findings);

// {"findings": [{"check", "severity", "message", "fix" (null when none), "details"}], "worst",
// "exit_status"}.
Json findings_to_json(const std::vector<Finding>& findings);

}  // namespace jitcache::client::cli
