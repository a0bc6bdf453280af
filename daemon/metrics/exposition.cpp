#include <daemon/metrics/exposition.hpp>

#include <charconv>
#include <cmath>

namespace jitcache::daemon::metrics {

std::string escape_label_value(std::string_view value) {
  std::string out;
  out.reserve(value.size());
  for (char c : value) {
    switch (c) {
      case '\\': out += "\\\\"; break;
      case '"': out += "\\\""; break;
      case '\n': out += "\\n"; break;
      default: out.push_back(c);
    }
  }
  return out;
}

std::string escape_help(std::string_view help) {
  std::string out;
  out.reserve(help.size());
  for (char c : help) {
    switch (c) {
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      default: out.push_back(c);
    }
  }
  return out;
}

std::string format_value(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  char buffer[64];
  auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, value);
  return std::string(buffer, ec == std::errc() ? end : buffer);
}

void Exposition::family(std::string_view name, MetricType type, std::string_view help) {
  m_text += "# HELP ";
  m_text += name;
  m_text += ' ';
  m_text += escape_help(help);
  m_text += "\n# TYPE ";
  m_text += name;
  m_text += type == MetricType::counter ? " counter\n" : type == MetricType::gauge ? " gauge\n" : " histogram\n";
}

void Exposition::sample_head(std::string_view name, const Labels& labels, std::string_view extra_label,
                             std::string_view extra_value) {
  m_text += name;
  if (labels.empty() && extra_label.empty()) {
    m_text += ' ';
    return;
  }
  char separator = '{';
  auto label = [&](std::string_view key, std::string_view value) {
    m_text += separator;
    m_text += key;
    m_text += "=\"";
    m_text += escape_label_value(value);
    m_text += '"';
    separator = ',';
  };
  for (const auto& [key, value] : labels) label(key, value);
  if (!extra_label.empty()) label(extra_label, extra_value);
  m_text += "} ";
}

void Exposition::sample(std::string_view name, const Labels& labels, std::uint64_t value) {
  sample_head(name, labels);
  m_text += std::to_string(value);
  m_text += '\n';
}

void Exposition::sample(std::string_view name, const Labels& labels, double value) {
  sample_head(name, labels);
  m_text += format_value(value);
  m_text += '\n';
}

void Exposition::histogram(std::string_view name, const Labels& labels, std::span<const std::string_view> le,
                           std::span<const std::uint64_t> counts, double sum) {
  const std::string bucket = std::string(name) + "_bucket";
  std::uint64_t cumulative = 0;
  for (std::size_t i = 0; i < le.size(); ++i) {
    if (i < counts.size()) cumulative += counts[i];
    sample_head(bucket, labels, "le", le[i]);
    m_text += std::to_string(cumulative);
    m_text += '\n';
  }
  for (std::size_t i = le.size(); i < counts.size(); ++i) cumulative += counts[i];
  sample_head(bucket, labels, "le", "+Inf");
  m_text += std::to_string(cumulative);
  m_text += '\n';
  sample(std::string(name) + "_sum", labels, sum);
  sample(std::string(name) + "_count", labels, cumulative);
}

}  // namespace jitcache::daemon::metrics
