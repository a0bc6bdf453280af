#include <client/cli/text_table.hpp>

#include <algorithm>
#include <cassert>

#include <client/cli/terminal_text.hpp>

namespace jitcache::client::cli {

namespace {

constexpr const char* k_column_gap = "  ";

// Width on screen: counts UTF-8 code points, not bytes, so a producer name with accents does not
// push the columns after it out of line.
std::size_t display_width(const std::string& text) {
  return static_cast<std::size_t>(
      std::count_if(text.begin(), text.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

}  // namespace

TextTable::TextTable(std::vector<Column> columns) : m_columns(std::move(columns)) {}

void TextTable::add_row(std::vector<std::string> cells) {
  assert(cells.size() == m_columns.size());
  cells.resize(m_columns.size());
  for (std::string& cell : cells) cell = terminal_text(cell);
  m_rows.push_back(std::move(cells));
}

void TextTable::print(std::ostream& out) const {
  const bool has_headings =
      std::any_of(m_columns.begin(), m_columns.end(), [](const Column& c) { return !c.heading.empty(); });
  std::vector<std::size_t> widths(m_columns.size(), 0);
  for (std::size_t i = 0; i < m_columns.size(); ++i) {
    if (has_headings) widths[i] = display_width(m_columns[i].heading);
    for (const auto& row : m_rows) widths[i] = std::max(widths[i], display_width(row[i]));
  }

  auto print_line = [&](auto cell_of) {
    std::string line;
    for (std::size_t i = 0; i < m_columns.size(); ++i) {
      const std::string& cell = cell_of(i);
      const std::size_t padding = widths[i] - display_width(cell);
      const bool last = i + 1 == m_columns.size();
      if (i > 0) line += k_column_gap;
      if (m_columns[i].align == Align::right) line.append(padding, ' ');
      line += cell;
      if (m_columns[i].align == Align::left && !last) line.append(padding, ' ');
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out << line << '\n';
  };

  if (has_headings) print_line([&](std::size_t i) -> const std::string& { return m_columns[i].heading; });
  for (const auto& row : m_rows) print_line([&](std::size_t i) -> const std::string& { return row[i]; });
}

}  // namespace jitcache::client::cli
