// proto/PROTOCOL.md against the code: every numbered value of the protocol (ops, statuses, header
// flags, capability bits, LOOKUP selectors, load stages, report outcomes, compile priorities and
// origins, link input kinds, image codecs, REMOTE_CHECK's breaker states, probe answers and lease
// support, EXPLAIN's selectors, verdicts and reasons, eviction causes, miss kinds and NVRTC uncached reasons) is in the
// document's table for it, with the same number and name, and the document has no number the code lacks; every
// enumerator of those enums is in its code table; and every "PROTOCOL.md §N" a file of the repository cites names a
// section that exists.
#include <catch2/catch.hpp>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <proto/bundle_messages.hpp>
#include <proto/compile_messages.hpp>
#include <proto/explain_messages.hpp>
#include <proto/messages.hpp>
#include <proto/nvrtc_note_messages.hpp>
#include <proto/remote_check_messages.hpp>
#include <proto/wire.hpp>

#include <daemon/store/image_codec.hpp>

#include <tests/support/markdown_tables.hpp>

using namespace jitcache::proto;
using jitcache::testing::markdown_table_after;

namespace {

std::string source_file(const std::string& relative) {
  std::ifstream in(std::string(JITCACHE_SOURCE_DIR) + "/" + relative);
  REQUIRE(in.good());
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

const std::string& protocol_md() {
  static const std::string text = source_file("proto/PROTOCOL.md");
  return text;
}

// One numbered vocabulary: its rows as the code has them, the PROTOCOL.md heading of its table, and
// the numbers it has retired (a row "| n | — | …" in the document).
struct Vocabulary {
  std::string heading;
  std::map<std::uint64_t, std::string> code;
  std::vector<std::uint64_t> retired;
};

template <class T, std::size_t N>
std::map<std::uint64_t, std::string> numbered(const std::array<NamedValue<T>, N>& table) {
  std::map<std::uint64_t, std::string> rows;
  for (const auto& row : table) rows.emplace(static_cast<std::uint64_t>(row.value), std::string(row.name));
  return rows;
}

template <class T, std::size_t N>
std::map<std::uint64_t, std::string> bits(const std::array<NamedValue<T>, N>& table) {
  std::map<std::uint64_t, std::string> rows;
  for (const auto& row : table) {
    REQUIRE(std::popcount(static_cast<std::uint64_t>(row.value)) == 1);
    rows.emplace(std::countr_zero(static_cast<std::uint64_t>(row.value)), std::string(row.name));
  }
  return rows;
}

// The persisted codecs of entries.codec, which entry_info carries (daemon/store/image_codec.hpp).
const std::array<NamedValue<jitcache::daemon::store::Codec>, 2> k_codecs{{
    {jitcache::daemon::store::Codec::raw, "raw"},
    {jitcache::daemon::store::Codec::zstd, "zstd"},
}};

std::vector<Vocabulary> vocabularies() {
  std::vector<std::uint64_t> retired_bits(k_retired_capability_bits.begin(), k_retired_capability_bits.end());
  return {
      {"3. Status codes", numbered(k_statuses), {}},
      {"5. Operations", numbered(k_ops), {}},
      {"Header flags", bits(k_header_flags), {}},
      {"Capability bits", bits(k_capabilities), retired_bits},
      {"LOOKUP selectors", numbered(k_lookup_selectors), {}},
      {"Load stages", numbered(k_failure_stages), {}},
      {"Report outcomes", numbered(k_report_failure_outcomes), {}},
      {"Compile priorities", numbered(k_compile_priorities), {}},
      {"Compile origins", numbered(k_compile_origins), {}},
      {"Link input kinds", numbered(k_link_input_kinds), {}},
      {"Image codecs", numbered(k_codecs), {}},
      {"Breaker states", numbered(k_breaker_states), {}},
      {"Probe answers", numbered(k_probe_answers), {}},
      {"Lease support", numbered(k_lease_supports), {}},
      {"Explain selectors", numbered(k_explain_selectors), {}},
      {"Explain verdicts", numbered(k_explain_verdicts), {}},
      {"Explain reasons", numbered(k_explain_reasons), {}},
      {"Eviction causes", numbered(k_eviction_causes), {}},
      {"Miss kinds", numbered(k_miss_kinds), {}},
      {"Import targets", numbered(k_import_targets), {}},
      {"NVRTC uncached reasons", numbered(k_nvrtc_uncached_reasons), {}},
  };
}

// The enumerators `name = number` of `enum class <name>` in a header's text, comments left out.
std::map<std::uint64_t, std::string> enumerators(const std::string& header, const std::string& name) {
  const std::size_t start = header.find("enum class " + name + " ");
  REQUIRE(start != std::string::npos);
  const std::size_t open = header.find('{', start);
  const std::size_t close = header.find("};", open);
  REQUIRE(close != std::string::npos);
  const std::string body = std::regex_replace(header.substr(open + 1, close - open - 1), std::regex("//[^\n]*"), "");
  std::map<std::uint64_t, std::string> values;
  const std::regex enumerator(R"((\w+)\s*=\s*(\d+))");
  for (auto it = std::sregex_iterator(body.begin(), body.end(), enumerator); it != std::sregex_iterator(); ++it) {
    values.emplace(std::stoull((*it)[2]), (*it)[1]);
  }
  REQUIRE_FALSE(values.empty());
  return values;
}

// The constants `k_<prefix><name> = 1... << <bit>` of a header.
std::map<std::uint64_t, std::string> bit_constants(const std::string& header, const std::string& prefix) {
  std::map<std::uint64_t, std::string> values;
  const std::regex constant("k_" + prefix + R"((\w+) = 1u?l?l? << (\d+);)");
  for (auto it = std::sregex_iterator(header.begin(), header.end(), constant); it != std::sregex_iterator(); ++it) {
    values.emplace(std::stoull((*it)[2]), (*it)[1]);
  }
  REQUIRE_FALSE(values.empty());
  return values;
}

std::string lower(std::string text) {
  for (char& c : text) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  return text;
}

std::string upper(std::string text) {
  for (char& c : text) c = static_cast<char>(c >= 'a' && c <= 'z' ? c - 'a' + 'A' : c);
  return text;
}

// The enumerators (or constants) a header declares are exactly the rows of the code's table.
void check_covers(const std::map<std::uint64_t, std::string>& from_header,
                  const std::map<std::uint64_t, std::string>& table, bool upper_case = false) {
  CHECK(from_header.size() == table.size());
  for (const auto& [number, name] : from_header) {
    INFO(name << " = " << number);
    REQUIRE(table.count(number) == 1);
    CHECK(table.at(number) == (upper_case ? upper(name) : name));
  }
}

}  // namespace

TEST_CASE("protocol spec: every numbered value of the code is in PROTOCOL.md's table with its number, and no other") {
  for (const Vocabulary& vocabulary : vocabularies()) {
    INFO("PROTOCOL.md table under \"" << vocabulary.heading << "\"");
    const auto rows = markdown_table_after(protocol_md(), vocabulary.heading);
    REQUIRE_FALSE(rows.empty());
    std::map<std::uint64_t, std::string> documented;
    for (const auto& row : rows) {
      REQUIRE(row.size() >= 2);
      INFO("row " << row[0] << " | " << row[1]);
      REQUIRE(std::regex_match(row[0], std::regex("[0-9]+")));
      CHECK(documented.emplace(std::stoull(row[0]), row[1]).second);
    }
    for (const auto& [number, name] : vocabulary.code) {
      INFO("the code's " << name << " = " << number);
      REQUIRE(documented.count(number) == 1);
      CHECK(documented.at(number) == name);
    }
    for (const auto& [number, name] : documented) {
      INFO("PROTOCOL.md's " << name << " = " << number);
      if (name == "—") {
        CHECK(std::find(vocabulary.retired.begin(), vocabulary.retired.end(), number) != vocabulary.retired.end());
        CHECK(vocabulary.code.count(number) == 0);
      } else {
        CHECK(vocabulary.code.count(number) == 1);
      }
    }
  }
}

TEST_CASE(
    "protocol spec: every enumerator of the numbered enums and every flag and capability constant is in its table") {
  const std::string wire = source_file("proto/wire.hpp");
  const std::string messages = source_file("proto/messages.hpp");
  const std::string compile = source_file("proto/compile_messages.hpp");
  const std::string codec = source_file("daemon/store/image_codec.hpp");
  check_covers(enumerators(wire, "Op"), numbered(k_ops), true);
  check_covers(enumerators(wire, "Status"), numbered(k_statuses));
  check_covers(bit_constants(wire, "capability_"), bits(k_capabilities));
  check_covers(bit_constants(wire, "flag_"), bits(k_header_flags));
  check_covers(enumerators(messages, "LookupSelector"), numbered(k_lookup_selectors));
  check_covers(enumerators(messages, "FailureStage"), numbered(k_failure_stages));
  check_covers(enumerators(messages, "ReportFailureOutcome"), numbered(k_report_failure_outcomes));
  check_covers(enumerators(compile, "CompilePriority"), numbered(k_compile_priorities));
  check_covers(enumerators(compile, "CompileOrigin"), numbered(k_compile_origins));
  check_covers(enumerators(source_file("proto/link_content.hpp"), "LinkInputKind"), numbered(k_link_input_kinds));
  check_covers(enumerators(codec, "Codec"), numbered(k_codecs));
  const std::string remote_check = source_file("proto/remote_check_messages.hpp");
  check_covers(enumerators(remote_check, "BreakerState"), numbered(k_breaker_states));
  check_covers(enumerators(remote_check, "ProbeAnswer"), numbered(k_probe_answers));
  check_covers(enumerators(remote_check, "LeaseSupport"), numbered(k_lease_supports));
  const std::string explain = source_file("proto/explain_messages.hpp");
  check_covers(enumerators(explain, "ExplainSelector"), numbered(k_explain_selectors));
  check_covers(enumerators(explain, "ExplainVerdict"), numbered(k_explain_verdicts));
  check_covers(enumerators(explain, "ExplainReason"), numbered(k_explain_reasons));
  check_covers(enumerators(explain, "EvictionCause"), numbered(k_eviction_causes));
  check_covers(enumerators(explain, "MissKind"), numbered(k_miss_kinds));
  check_covers(enumerators(source_file("proto/bundle_messages.hpp"), "ImportTarget"), numbered(k_import_targets));
  check_covers(enumerators(source_file("proto/nvrtc_note_messages.hpp"), "NvrtcUncachedReason"),
               numbered(k_nvrtc_uncached_reasons));
}

TEST_CASE("protocol spec: the name tables give the names the code prints") {
  CHECK(op_name(Op::report_failure) == "REPORT_FAILURE");
  CHECK(op_name(Op::remote_check) == "REMOTE_CHECK");
  CHECK(op_name(Op::explain) == "EXPLAIN");
  CHECK(op_name(static_cast<Op>(k_ops.size())) == "unknown");
  CHECK(status_name(Status::no_space) == "no_space");
  CHECK(status_name(static_cast<Status>(k_status_count)) == "unknown");
  CHECK(failure_stage_name(FailureStage::ptx_version) == "ptx_version");
  CHECK(failure_stage_name(static_cast<FailureStage>(0)) == "unknown");
  for (std::uint16_t n = 0; n < 64; ++n) {
    const bool in_table = std::any_of(k_ops.begin(), k_ops.end(), [n](const NamedValue<Op>& row) {
      return static_cast<std::uint16_t>(row.value) == n;
    });
    CHECK(is_known_op(n) == (n >= 1 && in_table));
  }
}

TEST_CASE("protocol spec: every PROTOCOL.md section a file of the repository cites exists, with the title it quotes") {
  // §N → its heading, and the headings below it.
  std::map<int, std::vector<std::string>> sections;
  {
    std::istringstream in(protocol_md());
    std::string line;
    int current = 0;
    const std::regex numbered_heading(R"(## (\d+)\. .*)");
    std::smatch match;
    while (std::getline(in, line)) {
      if (std::regex_match(line, match, numbered_heading)) {
        current = std::stoi(match[1]);
        sections[current].push_back(line);
      } else if (current != 0 && line.starts_with("###")) {
        sections[current].push_back(line);
      }
    }
  }
  REQUIRE(sections.size() >= 8);

  // "PROTOCOL.md §4 "Images by descriptor"", "[PROTOCOL.md](../proto/PROTOCOL.md) §5 COMPILE",
  // "PROTOCOL.md §2-§3"; in PROTOCOL.md itself also a bare "§1 "Restarts"" (but not another
  // document's "docs/client-guide.md §4").
  const std::regex citation(R"re(([\w./-]+\.md\)?)? ?§(\d+)(?:-(?:§)?(\d+))?(?: "([^"]+)"| ([A-Z][A-Z_]+)\b)?)re");
  std::size_t checked = 0;
  for (const char* top : {"proto", "client", "daemon", "docs", "tests", "packaging", "scripts", "README.md"}) {
    const std::filesystem::path root = std::filesystem::path(JITCACHE_SOURCE_DIR) / top;
    if (!std::filesystem::exists(root)) continue;
    std::vector<std::filesystem::path> files;
    if (std::filesystem::is_regular_file(root)) {
      files.push_back(root);
    } else {
      for (const auto& entry : std::filesystem::recursive_directory_iterator(root)) {
        const auto extension = entry.path().extension();
        if (entry.is_regular_file() && (extension == ".cpp" || extension == ".hpp" || extension == ".h" ||
                                        extension == ".md" || extension == ".cmake" || extension == ".txt")) {
          files.push_back(entry.path());
        }
      }
    }
    for (const auto& file : files) {
      std::ifstream in(file);
      std::ostringstream text_stream;
      text_stream << in.rdbuf();
      const std::string text = text_stream.str();
      const bool is_protocol_md = file.filename() == "PROTOCOL.md";
      for (auto it = std::sregex_iterator(text.begin(), text.end(), citation); it != std::sregex_iterator(); ++it) {
        const std::smatch& match = *it;
        const std::string cited_file = match[1].str();
        const bool names_protocol_md = cited_file.ends_with("PROTOCOL.md") || cited_file.ends_with("PROTOCOL.md)");
        if (!names_protocol_md && !(is_protocol_md && cited_file.empty())) continue;
        const int first = std::stoi(match[2]);
        const int last = match[3].matched ? std::stoi(match[3]) : first;
        INFO(file.string() << ": " << match.str());
        for (int n = first; n <= last; ++n) CHECK(sections.count(n) == 1);
        ++checked;
        if (sections.count(first) == 0) continue;
        const std::vector<std::string>& headings = sections.at(first);
        if (match[4].matched) {
          // A quoted title names a heading of that section, or of the section's op.
          // A title may run over a comment's line break ("Images by\n// descriptor"); case aside.
          const std::string title = lower(std::regex_replace(match[4].str(), std::regex(R"(\s*\n\s*(//|#)?\s*)"), " "));
          bool found = false;
          for (const auto& heading : headings) found |= lower(heading).find(title) != std::string::npos;
          CHECK(found);
        } else if (match[5].matched && first == 5) {
          const std::string op = match[5].str();
          bool found = false;
          for (const auto& heading : headings) found |= heading.starts_with("### " + op + " (");
          CHECK(found);
        }
      }
    }
  }
  CHECK(checked > 20);
}
