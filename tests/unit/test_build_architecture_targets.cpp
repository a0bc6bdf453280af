// docs/architecture.md "Targets and which may depend on which" against the build's own declarations:
// every jitcache_module() call of this configuration, as cmake/jitcache_module.cmake writes them to
// <build>/jitcache_modules.tsv, must be one row of the table with its kind, folder, the jitcache
// targets it uses and the other libraries it links (USES and PRIVATE), and every row must be such
// a call. Each difference is reported on its own, naming the row, the column, what the table says,
// what the declaration says and where the declaration is.
//
// A cell's text in parentheses is commentary and not compared; a list is comma-separated, names in
// backticks or not; "—" is an empty list. The jitcache targets column names them without the
// "jitcache_" prefix (daemon_store for jitcache_daemon_store).
#include <catch2/catch.hpp>

#include <algorithm>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include <tests/support/markdown_tables.hpp>

namespace {

using jitcache::testing::markdown_table_after;
using jitcache::testing::MarkdownRow;

constexpr std::string_view k_heading = "Targets and which may depend on which";
constexpr std::string_view k_module_prefix = "jitcache_";

struct Declaration {
  std::string name;
  std::string kind;
  std::string folder;
  std::vector<std::string> uses;
  std::vector<std::string> private_uses;
  std::string declared_in;
};

struct Declarations {
  std::map<std::string, Declaration> built;
  std::map<std::string, std::string> not_built;  // name → why
};

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::vector<std::string> split(std::string_view text, char separator) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t end = std::min(text.find(separator, start), text.size());
    parts.emplace_back(text.substr(start, end - start));
    start = end + 1;
  }
  return parts;
}

std::vector<std::string> words(std::string_view text) {
  std::vector<std::string> out;
  for (std::string& word : split(text, ' ')) {
    if (!word.empty()) out.push_back(std::move(word));
  }
  return out;
}

Declarations read_declarations(const std::string& text) {
  Declarations out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    const std::vector<std::string> fields = split(line, '\t');
    if (fields.size() == 3 && fields[0] == "not built") {
      out.not_built[fields[1]] = fields[2];
    } else if (fields.size() == 6) {
      out.built[fields[0]] =
          Declaration{fields[0], fields[1], fields[2], words(fields[3]), words(fields[4]), fields[5]};
    } else {
      FAIL("jitcache_modules.tsv: a line of " << fields.size() << " fields: " << line);
    }
  }
  return out;
}

std::string trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '`')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '`')) text.remove_suffix(1);
  return std::string(text);
}

// The cell without its parenthesised commentary (nested parentheses included).
std::string without_commentary(std::string_view cell) {
  std::string out;
  int depth = 0;
  for (const char c : cell) {
    if (c == '(') ++depth;
    if (depth == 0) out += c;
    if (c == ')' && depth > 0) --depth;
  }
  return out;
}

// The first name in backticks, else the cell's text before any commentary.
std::string first_name(std::string_view cell) {
  const std::size_t open = cell.find('`');
  if (open != std::string_view::npos) {
    const std::size_t close = cell.find('`', open + 1);
    if (close != std::string_view::npos) return std::string(cell.substr(open + 1, close - open - 1));
  }
  return trim(without_commentary(cell));
}

std::set<std::string> names_in(std::string_view cell) {
  std::set<std::string> names;
  for (const std::string& part : split(without_commentary(cell), ',')) {
    std::string name = trim(part);
    if (!name.empty() && name != "—") names.insert(std::move(name));
  }
  return names;
}

std::string folder_of(std::string folder) {
  while (folder.size() > 1 && folder.back() == '/') folder.pop_back();
  return folder;
}

std::string listed(const std::set<std::string>& names) {
  if (names.empty()) return "—";
  std::string out;
  for (const std::string& name : names) out += (out.empty() ? "" : ", ") + name;
  return out;
}

std::set<std::string> difference(const std::set<std::string>& a, const std::set<std::string>& b) {
  std::set<std::string> out;
  std::set_difference(a.begin(), a.end(), b.begin(), b.end(), std::inserter(out, out.end()));
  return out;
}

std::string short_name(const std::string& module) {
  return module.starts_with(k_module_prefix) ? module.substr(k_module_prefix.size()) : module;
}

// What the declaration's two list columns should say: the jitcache modules it uses (short names),
// and everything else it links (link options such as -Wl,--as-needed left out).
std::pair<std::set<std::string>, std::set<std::string>> expected_lists(const Declaration& declaration,
                                                                       const Declarations& all) {
  std::set<std::string> modules;
  std::set<std::string> libraries;
  for (const std::string& used : declaration.uses) {
    if (all.built.contains(used)) {
      modules.insert(short_name(used));
    } else {
      libraries.insert(used);
    }
  }
  for (const std::string& used : declaration.private_uses) {
    if (used.starts_with("-")) continue;
    if (all.built.contains(used)) {
      modules.insert(short_name(used));
    } else {
      libraries.insert(used);
    }
  }
  return {modules, libraries};
}

std::string where(const Declaration& declaration) {
  return "jitcache_module(" + declaration.name + ") in " + declaration.declared_in;
}

void compare_list(std::vector<std::string>& problems, const std::string& row, const std::string& column,
                  const std::set<std::string>& table, const std::set<std::string>& build,
                  const Declaration& declaration) {
  if (table == build) return;
  std::string problem = "row `" + row + "`, column \"" + column + "\": the table says " + listed(table) + ", " +
                        where(declaration) + " says " + listed(build);
  if (const auto missing = difference(build, table); !missing.empty()) problem += "; add " + listed(missing);
  if (const auto extra = difference(table, build); !extra.empty()) problem += "; remove " + listed(extra);
  problems.push_back(std::move(problem));
}

std::string suggested_row(const Declaration& declaration, const Declarations& all) {
  const auto [modules, libraries] = expected_lists(declaration, all);
  auto ticked = [](const std::set<std::string>& names) {
    if (names.empty()) return std::string("—");
    std::string out;
    for (const std::string& name : names) out += (out.empty() ? "`" : ", `") + name + "`";
    return out;
  };
  return "| `" + declaration.name + "` | " + declaration.kind + " | `" + declaration.folder + "/` | " +
         listed(modules) + " | " + ticked(libraries) + " |";
}

std::vector<std::string> compare(const std::vector<MarkdownRow>& rows, const Declarations& all) {
  std::vector<std::string> problems;
  std::set<std::string> seen;
  for (const MarkdownRow& cells : rows) {
    const std::string row = cells.empty() ? std::string() : first_name(cells[0]);
    if (cells.size() != 5) {
      problems.push_back("row `" + row + "`: " + std::to_string(cells.size()) +
                         " cells; the table has 5 (target | kind | folder | jitcache targets | other libraries)");
      continue;
    }
    if (!seen.insert(row).second) {
      problems.push_back("row `" + row + "`: a second row for the same target");
      continue;
    }
    const auto found = all.built.find(row);
    if (found == all.built.end()) {
      if (!all.not_built.contains(row)) {
        problems.push_back("row `" + row + "`: no jitcache_module() call declares " + row +
                           " in this build; remove the row, or name the target as the build does");
      }
      continue;
    }
    const Declaration& declaration = found->second;
    if (const std::string kind = first_name(cells[1]); kind != declaration.kind) {
      problems.push_back("row `" + row + "`, column \"kind\": the table says " + kind + ", " + where(declaration) +
                         " says " + declaration.kind);
    }
    if (const std::string folder = folder_of(first_name(cells[2])); folder != declaration.folder) {
      problems.push_back("row `" + row + "`, column \"folder\": the table says `" + folder + "/`, " +
                         where(declaration) + " says FOLDER " + declaration.folder);
    }
    const auto [modules, libraries] = expected_lists(declaration, all);
    compare_list(problems, row, "jitcache targets", names_in(cells[3]), modules, declaration);
    compare_list(problems, row, "other libraries", names_in(cells[4]), libraries, declaration);
  }
  for (const auto& [name, declaration] : all.built) {
    if (!seen.contains(name)) {
      problems.push_back("no row for `" + name + "`, which " + where(declaration) +
                         " declares; add: " + suggested_row(declaration, all));
    }
  }
  return problems;
}

std::string joined(const std::vector<std::string>& problems) {
  std::string out = "docs/architecture.md \"" + std::string(k_heading) + "\" differs from the build's declarations (" +
                    std::to_string(problems.size()) + "):";
  for (const std::string& problem : problems) out += "\n  - " + problem;
  return out;
}

const std::string k_declarations_path = JITCACHE_MODULE_DECLARATIONS;

}  // namespace

TEST_CASE("architecture: the targets table of docs/architecture.md is the build's jitcache_module() declarations") {
  const std::string declarations_text = read_text(k_declarations_path);
  INFO("declarations: " << k_declarations_path << " (written when the build is configured)");
  REQUIRE_FALSE(declarations_text.empty());
  const Declarations all = read_declarations(declarations_text);
  REQUIRE(all.built.contains("jitcache_common"));

  const std::vector<MarkdownRow> rows =
      markdown_table_after(read_text(std::string(JITCACHE_SOURCE_DIR) + "/docs/architecture.md"), k_heading);
  REQUIRE_FALSE(rows.empty());
  const std::vector<std::string> problems = compare(rows, all);
  if (!problems.empty()) FAIL_CHECK(joined(problems));
}

TEST_CASE("architecture: the targets check names the row, the column and both sides of each difference") {
  Declarations all;
  all.built["jitcache_common"] = {"jitcache_common", "STATIC", "common", {}, {}, "common/CMakeLists.txt"};
  all.built["jitcache_proto"] = {
      "jitcache_proto", "STATIC", "proto", {"jitcache_common"}, {"OpenSSL::Crypto", "-Wl,x"}, "proto/CMakeLists.txt"};
  all.built["jitcache_daemon_store"] = {"jitcache_daemon_store", "STATIC", "daemon/store",
                                        {"jitcache_proto"},      {},       "daemon/CMakeLists.txt"};
  all.not_built["jitcache-compile"] = "no nvJitLink found";

  const std::string document =
      "## Targets and which may depend on which\n\n"
      "| target | kind | folder | jitcache targets | other libraries |\n"
      "|---|---|---|---|---|\n"
      "| `jitcache_common` | STATIC | `common/` (what all share) | — | — |\n"
      "| `jitcache_proto` | STATIC | `proto/` | common, schema (the key) | `OpenSSL::Crypto` |\n"
      "| `jitcache_gone` | STATIC | `gone/` | — | — |\n"
      "| `jitcache-compile` | EXECUTABLE | `daemon/compile_worker/` | daemon_compile | — |\n";
  const std::vector<std::string> problems = compare(markdown_table_after(document, k_heading), all);
  CAPTURE(joined(problems));
  REQUIRE(problems.size() == 3);
  CHECK(problems[0] ==
        "row `jitcache_proto`, column \"jitcache targets\": the table says common, schema, "
        "jitcache_module(jitcache_proto) in proto/CMakeLists.txt says common; remove schema");
  CHECK(problems[1] ==
        "row `jitcache_gone`: no jitcache_module() call declares jitcache_gone in this build; remove the row, or "
        "name the target as the build does");
  CHECK(problems[2] ==
        "no row for `jitcache_daemon_store`, which jitcache_module(jitcache_daemon_store) in daemon/CMakeLists.txt "
        "declares; add: | `jitcache_daemon_store` | STATIC | `daemon/store/` | proto | — |");

  const std::string wrong_folder_and_kind =
      "## Targets and which may depend on which\n\n"
      "| target | kind | folder | jitcache targets | other libraries |\n"
      "|---|---|---|---|---|\n"
      "| `jitcache_common` | SHARED | `common/sub/` | — | `zstd` |\n";
  all.built.erase("jitcache_proto");
  all.built.erase("jitcache_daemon_store");
  const std::vector<std::string> second = compare(markdown_table_after(wrong_folder_and_kind, k_heading), all);
  CAPTURE(joined(second));
  REQUIRE(second.size() == 3);
  CHECK(second[0] ==
        "row `jitcache_common`, column \"kind\": the table says SHARED, jitcache_module(jitcache_common) in "
        "common/CMakeLists.txt says STATIC");
  CHECK(second[1] ==
        "row `jitcache_common`, column \"folder\": the table says `common/sub/`, jitcache_module(jitcache_common) in "
        "common/CMakeLists.txt says FOLDER common");
  CHECK(second[2] ==
        "row `jitcache_common`, column \"other libraries\": the table says zstd, jitcache_module(jitcache_common) in "
        "common/CMakeLists.txt says —; remove zstd");
}
