// A plain-text table with aligned columns for the CLI's human output (ls, stats). Numbers read
// best right-aligned, text left-aligned; the last column is never padded so lines carry no
// trailing spaces. Every cell is shown through terminal_text(), since cells hold what the daemon
// sent. Thread safety: one owner.
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace jitcache::client::cli {

enum class Align { left, right };

class TextTable {
 public:
  struct Column {
    std::string heading;  // empty headings on every column: no heading line is printed
    Align align = Align::left;
  };

  explicit TextTable(std::vector<Column> columns);

  // `cells` must have one entry per column.
  void add_row(std::vector<std::string> cells);
  bool empty() const { return m_rows.empty(); }

  void print(std::ostream& out) const;

 private:
  std::vector<Column> m_columns;
  std::vector<std::vector<std::string>> m_rows;
};

}  // namespace jitcache::client::cli
