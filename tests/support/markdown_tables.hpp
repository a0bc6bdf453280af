// Reads the tables of the repository's Markdown documents (proto/PROTOCOL.md, docs/operations.md),
// so that tests can check a document against the code's own tables: the first table after a
// heading, as rows of trimmed cells with the backticks around a cell taken off.
// Header-only; thread safety: pure functions.
#pragma once

#include <cstddef>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace jitcache::testing {

using MarkdownRow = std::vector<std::string>;

inline std::string trim_cell(std::string_view cell) {
  while (!cell.empty() && cell.front() == ' ') cell.remove_prefix(1);
  while (!cell.empty() && cell.back() == ' ') cell.remove_suffix(1);
  if (cell.size() >= 2 && cell.front() == '`' && cell.back() == '`' &&
      cell.substr(1, cell.size() - 2).find('`') == std::string_view::npos) {
    cell = cell.substr(1, cell.size() - 2);
  }
  return std::string(cell);
}

// The heading's text ("Capability bits" for "#### Capability bits"), or nullopt for a line that is
// no heading.
inline std::optional<std::string> heading_text(std::string_view line) {
  std::size_t level = 0;
  while (level < line.size() && line[level] == '#') ++level;
  if (level == 0 || level > 6 || level >= line.size() || line[level] != ' ') return std::nullopt;
  return std::string(line.substr(level + 1));
}

// The rows of the first table after the heading whose text is `heading` (header and separator rows
// left out); empty when there is no such heading or no table before the next heading.
inline std::vector<MarkdownRow> markdown_table_after(const std::string& document, std::string_view heading) {
  std::istringstream in(document);
  std::string line;
  bool in_section = false;
  bool in_table = false;
  std::size_t table_line = 0;
  std::vector<MarkdownRow> rows;
  while (std::getline(in, line)) {
    if (!in_section) {
      in_section = heading_text(line) == std::string(heading);
      continue;
    }
    const bool table_row = line.starts_with("|");
    if (!table_row) {
      if (in_table) break;
      if (heading_text(line)) break;
      continue;
    }
    in_table = true;
    if (table_line++ < 2) continue;  // the header row and the |---| row
    MarkdownRow cells;
    std::string_view rest(line);
    rest.remove_prefix(1);
    if (rest.ends_with("|")) rest.remove_suffix(1);
    for (std::size_t bar; (bar = rest.find('|')) != std::string_view::npos; rest.remove_prefix(bar + 1)) {
      cells.push_back(trim_cell(rest.substr(0, bar)));
    }
    cells.push_back(trim_cell(rest));
    rows.push_back(std::move(cells));
  }
  return rows;
}

}  // namespace jitcache::testing
