#include <client/src/nvrtc/program_name_use.hpp>

#include <algorithm>
#include <memory>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include <client/src/nvrtc/scan_memo.hpp>
#include <client/src/nvrtc/source_text.hpp>
#include <proto/byte_io.hpp>
#include <proto/digest.hpp>
#include <proto/include_record_lines.hpp>
#include <proto/regular_file.hpp>

namespace jitcache::client::nvrtc {

namespace {

// Rationale: the include scan reads at most 512 MiB for a whole compile (include_scan.cpp).
constexpr std::size_t k_max_text_bytes = std::size_t{512} << 20;

// Names the payload's layout and the rules below: facts written by other rules are not read.
constexpr std::string_view k_memo_kind = "program name use 4";

// What expands to the name where the program's own text names it; "##" stands for a definition that
// pastes tokens, which can make any of the others (`CAT(__FI, LE__)`).
const std::unordered_set<std::string_view>& names_the_file() {
  static const std::unordered_set<std::string_view> seeds = {
      "__FILE__", "__FILE_NAME__", "__BASE_FILE__", "__builtin_FILE", "__builtin_source_location", "assert", "##"};
  return seeds;
}

// What takes the file of the call it is evaluated for (a default argument: its caller's).
const std::unordered_set<std::string_view>& names_the_caller() {
  static const std::unordered_set<std::string_view> seeds = {"__builtin_FILE", "__builtin_source_location"};
  return seeds;
}

// What expands to the program's own name in whichever text it stands.
const std::unordered_set<std::string_view>& names_the_program() {
  static const std::unordered_set<std::string_view> seeds = {"__BASE_FILE__"};
  return seeds;
}

bool identifier_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '$'; }
bool identifier_char(char c) { return identifier_start(c) || (c >= '0' && c <= '9'); }
bool blank(char c) { return c == ' ' || c == '\t' || c == '\f' || c == '\v' || c == '\r'; }

// Every identifier of `text`, numbers (1e5, 0x1fULL) skipped.
template <typename Each>
void for_each_identifier(std::string_view text, Each each) {
  for (std::size_t i = 0; i < text.size();) {
    if (identifier_start(text[i])) {
      std::size_t end = i;
      while (end < text.size() && identifier_char(text[end])) ++end;
      each(text.substr(i, end - i));
      i = end;
    } else if (text[i] >= '0' && text[i] <= '9') {
      while (i < text.size() && (identifier_char(text[i]) || text[i] == '.')) ++i;
    } else {
      ++i;
    }
  }
}

struct Definition {
  std::string name;
  std::vector<std::string> body;  // the identifiers of its body
};

struct TextFacts {
  std::vector<Definition> definitions;
  std::unordered_set<std::string> outside;  // identifiers on lines that are no directive
};

TextFacts facts_of_text(std::string_view raw) {
  const std::string text = decommented(spliced(raw));
  TextFacts facts;
  for (std::size_t at = 0; at < text.size();) {
    std::size_t end = text.find('\n', at);
    if (end == std::string::npos) end = text.size();
    const std::string_view line = std::string_view(text).substr(at, end - at);
    at = end + 1;
    std::size_t i = 0;
    while (i < line.size() && blank(line[i])) ++i;
    const bool directive = line.substr(i).starts_with('#') || line.substr(i).starts_with("%:");
    if (!directive) {
      for_each_identifier(line, [&](std::string_view identifier) { facts.outside.emplace(identifier); });
      continue;
    }
    i += line[i] == '#' ? 1 : 2;
    while (i < line.size() && blank(line[i])) ++i;
    // Only a #define's body is ever expanded; #if, #pragma, #error reach no output but the log.
    if (!line.substr(i).starts_with("define") || (i + 6 < line.size() && identifier_char(line[i + 6]))) continue;
    i += 6;
    while (i < line.size() && blank(line[i])) ++i;
    std::size_t name_end = i;
    while (name_end < line.size() && identifier_char(line[name_end])) ++name_end;
    Definition definition{std::string(line.substr(i, name_end - i)), {}};
    std::size_t body = name_end;
    if (body < line.size() && line[body] == '(') {
      const std::size_t close = line.find(')', body);
      body = close == std::string_view::npos ? line.size() : close + 1;
    }
    for_each_identifier(line.substr(body),
                        [&](std::string_view identifier) { definition.body.emplace_back(identifier); });
    if (line.find("##", body) != std::string_view::npos) definition.body.emplace_back("##");
    facts.definitions.push_back(std::move(definition));
  }
  return facts;
}

// What the files on disk say, as far as the name goes.
struct DiskFacts {
  std::vector<std::string> file_macros;       // macros reaching names_the_file() or a caller function
  std::vector<std::string> caller_macros;     // macros reaching names_the_caller()
  std::vector<std::string> caller_functions;  // functions whose parameters evaluate one of those
  bool calls_outside = false;                 // one evaluated outside any parentheses (a member's initializer)
};

// Past the string or character literal that begins at `i` (its line's end if it is not closed).
std::size_t past_literal(std::string_view text, std::size_t i) {
  const char quote = text[i];
  if (quote == '"' && i > 0 && text[i - 1] == 'R') {  // R"delimiter( ... )delimiter"
    const std::size_t open = text.find('(', i);
    if (open == std::string_view::npos) return text.size();
    const std::string close = ")" + std::string(text.substr(i + 1, open - i - 1)) + "\"";
    const std::size_t end = text.find(close, open);
    return end == std::string_view::npos ? text.size() : end + close.size();
  }
  for (++i; i < text.size() && text[i] != '\n'; ++i) {
    if (text[i] == '\\') {
      ++i;
    } else if (text[i] == quote) {
      return i + 1;
    }
  }
  return i;
}

// The functions in whose parentheses `text` (outside directives) evaluates one of `callers`: a
// default argument `f(const char* file = __builtin_FILE())` takes the file of f's caller. False
// when one stands outside any parentheses (a default member initializer takes its constructor's),
// in parentheses no name precedes (a lambda's: `[](const char* f = __builtin_FILE()) {}`), or where
// no parameter of the parentheses around it has an `=` before it: a call's argument, no default
// argument (`const char* f = tail(__builtin_FILE());`, a member's initializer again).
bool find_caller_functions(std::string_view raw, const std::unordered_set<std::string_view>& callers,
                           std::unordered_set<std::string>& functions) {
  const std::string text = decommented(spliced(raw));
  std::vector<std::string_view> open;  // the identifier before each open parenthesis ("" if none)
  std::vector<bool> assigned;          // per open parenthesis: an `=` since its last `,`
  std::string_view last;               // the identifier just before, blanks apart
  bool line_start = true;
  for (std::size_t i = 0; i < text.size();) {
    const char c = text[i];
    if (line_start && (c == '#' || (c == '%' && i + 1 < text.size() && text[i + 1] == ':'))) {
      i = std::min(text.find('\n', i), text.size());  // a directive: no code
      continue;
    }
    if (c == '\n') {
      line_start = true;
      ++i;
      continue;
    }
    if (blank(c)) {
      ++i;
      continue;
    }
    line_start = false;
    if (identifier_start(c)) {
      std::size_t end = i;
      while (end < text.size() && identifier_char(text[end])) ++end;
      const std::string_view identifier = std::string_view(text).substr(i, end - i);
      if (callers.count(identifier) != 0) {
        // No name before the innermost parenthesis (a lambda's, an operator's, a parenthesized
        // expression's): whose call it takes cannot be named.
        if (open.empty() || open.back().empty()) return false;
        if (std::find(assigned.begin(), assigned.end(), true) == assigned.end()) return false;
        for (const std::string_view function : open) {
          if (!function.empty()) functions.emplace(function);
        }
      }
      last = identifier;
      i = end;
      continue;
    }
    if (c == '"' || (c == '\'' && (i == 0 || !identifier_char(text[i - 1])))) {
      i = past_literal(text, i);
    } else if (c >= '0' && c <= '9') {
      while (i < text.size() && (identifier_char(text[i]) || text[i] == '.' || text[i] == '\'')) ++i;
    } else if (c == '(') {
      open.push_back(last);
      assigned.push_back(false);
      ++i;
    } else if (c == ')') {
      if (!open.empty()) open.pop_back();
      if (!assigned.empty()) assigned.pop_back();
      ++i;
    } else if (c == ',' || c == '=') {
      // `=` alone, not `==`, `<=`, `>=`, `!=` or a compound assignment's second character.
      const bool equals = c == '=' && (i + 1 >= text.size() || text[i + 1] != '=') &&
                          (i == 0 || std::string_view("=<>!+-*/%&|^").find(text[i - 1]) == std::string_view::npos);
      if (!assigned.empty() && (c == ',' || equals)) assigned.back() = c == '=';
      i += c == '=' && i + 1 < text.size() && text[i + 1] == '=' ? 2 : 1;
    } else {
      ++i;
    }
    last = {};
  }
  return true;
}

// Every macro whose definitions reach one of `seeds`, through any chain of definitions.
std::unordered_set<std::string> reaching(const std::vector<TextFacts>& texts,
                                         const std::unordered_set<std::string_view>& seeds) {
  std::unordered_map<std::string_view, std::vector<std::string_view>> used_by;  // identifier -> macros
  for (const TextFacts& text : texts) {
    for (const Definition& definition : text.definitions) {
      for (const std::string& identifier : definition.body) used_by[identifier].push_back(definition.name);
    }
  }
  std::unordered_set<std::string> found;
  std::vector<std::string_view> pending(seeds.begin(), seeds.end());
  while (!pending.empty()) {
    const std::string_view identifier = pending.back();
    pending.pop_back();
    const auto users = used_by.find(identifier);
    if (users == used_by.end()) continue;
    for (const std::string_view macro : users->second) {
      if (seeds.count(macro) == 0 && found.emplace(macro).second) pending.push_back(macro);
    }
  }
  return found;
}

// The facts of the record's files, read now; nullopt when one is unreadable or changed since.
std::optional<DiskFacts> read_disk_facts(std::string_view record, std::string_view program) {
  const auto lines = proto::include_record_lines(record);
  if (!lines) return std::nullopt;
  std::vector<TextFacts> texts;
  std::vector<std::string> contents;
  for (const auto& [path, state] : *lines) {
    // The program's own file (CuPy writes the source there) is no text NVRTC reads.
    if (!state.starts_with("file ") || path == program) continue;
    auto content = proto::read_regular_file(std::string(path), k_max_text_bytes);
    if (!content || proto::to_hex(proto::sha256(proto::as_bytes(*content))) != state.substr(5)) return std::nullopt;
    texts.push_back(facts_of_text(*content));
    contents.push_back(std::move(*content));
  }
  DiskFacts facts;
  const std::unordered_set<std::string> base_macros = reaching(texts, names_the_program());
  for (const TextFacts& text : texts) {
    for (const std::string& identifier : text.outside) {
      facts.calls_outside =
          facts.calls_outside || names_the_program().count(identifier) != 0 || base_macros.count(identifier) != 0;
    }
  }
  const std::unordered_set<std::string> caller_macros = reaching(texts, names_the_caller());
  std::unordered_set<std::string_view> callers(names_the_caller().begin(), names_the_caller().end());
  callers.insert(caller_macros.begin(), caller_macros.end());
  std::unordered_set<std::string> caller_functions;
  for (std::size_t i = 0; i < texts.size() && !facts.calls_outside; ++i) {
    const bool evaluates = std::any_of(texts[i].outside.begin(), texts[i].outside.end(),
                                       [&](const std::string& identifier) { return callers.count(identifier) != 0; });
    if (evaluates && !find_caller_functions(contents[i], callers, caller_functions)) facts.calls_outside = true;
  }
  std::unordered_set<std::string_view> file_seeds(names_the_file().begin(), names_the_file().end());
  file_seeds.insert(caller_functions.begin(), caller_functions.end());
  const std::unordered_set<std::string> file_macros = reaching(texts, file_seeds);
  facts.file_macros.assign(file_macros.begin(), file_macros.end());
  facts.caller_macros.assign(caller_macros.begin(), caller_macros.end());
  facts.caller_macros.insert(facts.caller_macros.end(), base_macros.begin(), base_macros.end());
  facts.caller_functions.assign(caller_functions.begin(), caller_functions.end());
  return facts;
}

std::vector<std::uint8_t> encoded(const DiskFacts& facts) {
  std::vector<std::uint8_t> bytes;
  proto::ByteWriter out(bytes);
  out.u8(facts.calls_outside ? 1 : 0);
  for (const std::vector<std::string>* list : {&facts.file_macros, &facts.caller_macros, &facts.caller_functions}) {
    out.u32(static_cast<std::uint32_t>(list->size()));
    for (const std::string& macro : *list) out.blob32(proto::as_bytes(macro));
  }
  return bytes;
}

std::optional<DiskFacts> decoded(const std::vector<std::uint8_t>& bytes) {
  proto::ByteReader in(proto::Bytes(bytes.data(), bytes.size()));
  DiskFacts facts;
  auto calls = in.u8("calls outside");
  if (!calls || *calls > 1) return std::nullopt;
  facts.calls_outside = *calls == 1;
  for (std::vector<std::string>* list : {&facts.file_macros, &facts.caller_macros, &facts.caller_functions}) {
    auto count = in.u32("count");
    if (!count || *count > bytes.size()) return std::nullopt;
    for (std::uint32_t i = 0; i < *count; ++i) {
      auto macro = in.blob32("macro");
      if (!macro) return std::nullopt;
      list->emplace_back(reinterpret_cast<const char*>(macro->data()), macro->size());
    }
  }
  if (in.remaining() != 0) return std::nullopt;
  return facts;
}

struct Remembered {
  std::mutex mutex;
  std::unordered_map<std::string, std::shared_ptr<const DiskFacts>> by_record;
};

// Never destroyed: a compile on another thread may outlive static destruction at exit.
Remembered& remembered() {
  static auto* facts = new Remembered();
  return *facts;
}

// What the facts depend on: the digests of the record's regular files, in order (not the absent
// paths: CuPy's records differ in those, under each program's own temporary directory).
std::string contents_of(std::string_view record, std::string_view program) {
  std::string digests;
  for (const auto& [path, state] :
       proto::include_record_lines(record).value_or(std::vector<proto::IncludeRecordLine>{})) {
    if (state.starts_with("file ") && path != program) digests.append(state.substr(5)).push_back('\n');
  }
  return digests;
}

// The digest the record holds for the program's own file; nullopt when it names none.
std::optional<std::string> program_file_digest(std::string_view record, std::string_view program) {
  for (const auto& [path, state] :
       proto::include_record_lines(record).value_or(std::vector<proto::IncludeRecordLine>{})) {
    if (path == program && state.starts_with("file ")) return std::string(state.substr(5));
  }
  return std::nullopt;
}

std::shared_ptr<const DiskFacts> disk_facts(std::string_view record, std::string_view program) {
  // Rationale: XXH3-128, not SHA-256: hashed on every compile, and both places it keys are this
  // uid's own (as the scan memo's entry names, scan_memo.hpp).
  const std::string key = proto::to_hex(proto::xxh3_128(proto::as_bytes(contents_of(record, program))));
  {
    std::lock_guard lock(remembered().mutex);
    if (auto it = remembered().by_record.find(key); it != remembered().by_record.end()) return it->second;
  }
  std::optional<DiskFacts> facts;
  if (auto memoized = memo_find_keyed(k_memo_kind, key)) facts = decoded(*memoized);
  if (!facts) {
    facts = read_disk_facts(record, program);
    if (!facts) return nullptr;
    memo_store_keyed(k_memo_kind, key, encoded(*facts));
  }
  auto shared = std::make_shared<const DiskFacts>(std::move(*facts));
  std::lock_guard lock(remembered().mutex);
  remembered().by_record.emplace(key, shared);
  return shared;
}

}  // namespace

bool compile_texts_hold(const ProgramTexts& texts, std::string_view record, std::string_view text) {
  const auto holds = [&](std::string_view in) { return in.find(text) != std::string_view::npos; };
  if (holds(texts.source) || holds(texts.option_definitions)) return true;
  for (const std::string& expression : texts.name_expressions) {
    if (holds(expression)) return true;
  }
  for (const auto& [name, content] : texts.headers) {
    if (holds(name) || holds(content)) return true;
  }
  const auto lines = proto::include_record_lines(record);
  if (!lines) return true;
  for (const auto& [path, state] : *lines) {
    if (!state.starts_with("file ")) continue;
    auto content = proto::read_regular_file(std::string(path), k_max_text_bytes);
    if (!content || proto::to_hex(proto::sha256(proto::as_bytes(*content))) != state.substr(5)) return true;
    if (holds(*content)) return true;
  }
  return false;
}

std::optional<std::string> output_may_name_program(const ProgramTexts& texts, std::string_view record) {
  const std::shared_ptr<const DiskFacts> disk = disk_facts(record, texts.name);
  if (!disk) return "a file the compile may read changed since the scan, or cannot be read";
  if (disk->calls_outside) {
    return "a file the compile may read expands __BASE_FILE__, or evaluates __builtin_FILE outside a default argument";
  }
  std::unordered_set<std::string_view> file(names_the_file().begin(), names_the_file().end());
  file.insert(disk->file_macros.begin(), disk->file_macros.end());
  file.insert(disk->caller_functions.begin(), disk->caller_functions.end());
  std::unordered_set<std::string_view> caller(names_the_caller().begin(), names_the_caller().end());
  caller.insert(names_the_program().begin(), names_the_program().end());
  caller.insert(disk->caller_macros.begin(), disk->caller_macros.end());

  const auto in_memory_may_name = [&](std::string_view text, bool is_source,
                                      const std::string& what) -> std::optional<std::string> {
    const TextFacts facts = facts_of_text(text);
    for (const Definition& definition : facts.definitions) {
      for (const std::string& identifier : definition.body) {
        if (file.count(identifier) != 0) return what + " defines " + definition.name + " over " + identifier;
      }
    }
    for (const std::string& identifier : facts.outside) {
      if ((is_source ? file : caller).count(identifier) != 0) return what + " uses " + identifier;
    }
    return std::nullopt;
  };
  if (auto why = in_memory_may_name(texts.source, true, "the source")) return why;
  // The program's own file, where the source includes it (`#include "k.cu"` beside the name): its
  // __FILE__ is the name itself, so it counts as the source does (CuPy writes the source there).
  if (const std::optional<std::string> digest = program_file_digest(record, texts.name)) {
    const auto content = proto::read_regular_file(std::string(texts.name), k_max_text_bytes);
    if (!content || proto::to_hex(proto::sha256(proto::as_bytes(*content))) != *digest) {
      return "the program's own file changed since the scan, or cannot be read";
    }
    if (auto why = in_memory_may_name(*content, true, "the program's own file")) return why;
  }
  for (const std::string& expression : texts.name_expressions) {
    if (auto why = in_memory_may_name(expression, true, "the name expression \"" + expression + "\"")) return why;
  }
  if (auto why = in_memory_may_name(texts.option_definitions, false, "a -D option")) return why;
  for (const auto& [name, content] : texts.headers) {
    if (auto why = in_memory_may_name(content, false, "the header \"" + name + "\" passed at create")) return why;
  }
  return std::nullopt;
}

void forget_program_name_facts() {
  std::lock_guard lock(remembered().mutex);
  remembered().by_record.clear();
}

}  // namespace jitcache::client::nvrtc
