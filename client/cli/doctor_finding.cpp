#include <client/cli/doctor_finding.hpp>

#include <algorithm>
#include <cstddef>

#include <client/cli/terminal_text.hpp>

namespace jitcache::client::cli {

namespace {

// Rationale: the widest severity and check names, so messages start in one column and a reader's
// eye runs down the severities.
constexpr std::size_t k_severity_width = 8;
constexpr std::size_t k_check_width = 15;

std::string padded(std::string_view text, std::size_t width) {
  std::string out(text);
  if (out.size() < width) out.append(width - out.size(), ' ');
  return out + ' ';
}

}  // namespace

std::string_view severity_name(Severity severity) {
  switch (severity) {
    case Severity::ok: return "ok";
    case Severity::warning: return "warning";
    case Severity::error: return "error";
  }
  return "error";
}

Severity worst_severity(const std::vector<Finding>& findings) {
  Severity worst = Severity::ok;
  for (const Finding& finding : findings) worst = std::max(worst, finding.severity);
  return worst;
}

ExitCode exit_code_for(Severity severity) {
  switch (severity) {
    case Severity::ok: return ExitCode::ok;
    case Severity::warning: return ExitCode::doctor_warning;
    case Severity::error: return ExitCode::doctor_error;
  }
  return ExitCode::doctor_error;
}

void print_findings(std::ostream& out, const std::vector<Finding>& findings) {
  std::size_t counts[3] = {0, 0, 0};
  const std::string indent(k_severity_width + 1 + k_check_width + 1, ' ');
  for (const Finding& finding : findings) {
    ++counts[static_cast<int>(finding.severity)];
    out << padded(severity_name(finding.severity), k_severity_width) << padded(finding.check, k_check_width)
        << terminal_text(finding.message) << '\n';
    if (!finding.fix.empty()) out << indent << "fix: " << terminal_text(finding.fix) << '\n';
  }
  out << "doctor: " << counts[0] << " ok, " << counts[1] << (counts[1] == 1 ? " warning, " : " warnings, ") << counts[2]
      << (counts[2] == 1 ? " error" : " errors") << '\n';
}

Json findings_to_json(const std::vector<Finding>& findings) {
  Json list = Json::array();
  for (const Finding& finding : findings) {
    list.push_back(Json{{"check", finding.check},
                        {"severity", severity_name(finding.severity)},
                        {"message", finding.message},
                        {"fix", finding.fix.empty() ? Json(nullptr) : Json(finding.fix)},
                        {"details", finding.details}});
  }
  const Severity worst = worst_severity(findings);
  Json json;
  json["findings"] = std::move(list);
  json["worst"] = severity_name(worst);
  json["exit_status"] = to_int(exit_code_for(worst));
  return json;
}

}  // namespace jitcache::client::cli
