#include <client/src/nvrtc/include_scan.hpp>

#include <sys/stat.h>
#include <time.h>

#include <cctype>
#include <fstream>
#include <iterator>
#include <memory>
#include <mutex>
#include <set>
#include <unordered_map>

#include <proto/digest.hpp>

namespace jitcache::client::nvrtc {

namespace {

constexpr std::size_t k_max_files = 20000;
constexpr std::size_t k_max_bytes = std::size_t{512} << 20;

common::Error unsupported(std::string message) {
  return common::make_error(common::ErrorCode::unsupported, std::move(message));
}

std::string directory_of(const std::string& path) {
  const std::size_t slash = path.rfind('/');
  if (slash == std::string::npos) return {};
  return slash == 0 ? "/" : path.substr(0, slash);
}

std::string joined(const std::string& directory, const std::string& name) {
  if (directory.empty()) return name;
  return directory.back() == '/' ? directory + name : directory + "/" + name;
}

// The text with every backslash-newline removed, as the preprocessor's first phase does.
std::string spliced(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\\' && i + 1 < text.size() && text[i + 1] == '\n') {
      ++i;
      continue;
    }
    if (text[i] == '\\' && i + 2 < text.size() && text[i + 1] == '\r' && text[i + 2] == '\n') {
      i += 2;
      continue;
    }
    out.push_back(text[i]);
  }
  return out;
}

// Blanks within a line: NVRTC 13.0 takes a form feed or vertical tab after the `#` as a space too
// (tests/integration/test_transparent_nvrtc_directive_forms.cpp).
std::size_t skip_blanks(std::string_view text, std::size_t at) {
  while (at < text.size() && (text[at] == ' ' || text[at] == '\t' || text[at] == '\f' || text[at] == '\v')) ++at;
  return at;
}

// The end of the string or character literal that opens at `at` (the index after its closing
// quote), or the end of its line when it is not closed there. A raw string literal (R"d( ... )d")
// ends at its own delimiter.
std::size_t literal_end(std::string_view text, std::size_t at) {
  const char quote = text[at];
  if (quote == '"' && at > 0 && text[at - 1] == 'R') {
    const std::size_t open = text.find('(', at + 1);
    if (open != std::string_view::npos && open - at - 1 <= 16) {
      const std::string close = ")" + std::string(text.substr(at + 1, open - at - 1)) + "\"";
      const std::size_t end = text.find(close, open + 1);
      if (end != std::string_view::npos) return end + close.size();
    }
  }
  for (std::size_t i = at + 1; i < text.size(); ++i) {
    if (text[i] == '\\') {
      ++i;
    } else if (text[i] == quote || text[i] == '\n') {
      return text[i] == quote ? i + 1 : i;
    }
  }
  return text.size();
}

// The text with every comment replaced by one space, as the preprocessor's third phase does; a
// comment's newlines are kept, so a directive after `/* ... */` on its line still begins the line
// as NVRTC sees it. String and character literals are kept as they are (a "/*" in one opens no
// comment). Rationale: NVRTC takes a comment as a blank anywhere in a directive (`#/* */include`,
// `/* */ #include`, `__has_include /* */ (...)`), and an include it follows that the record lacks
// would let a changed header be served the old answer.
std::string decommented(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  std::size_t i = 0;
  while (i < text.size()) {
    const char c = text[i];
    if (c == '"' || c == '\'') {
      // A digit separator (1'000) is no character literal.
      if (c == '\'' && i > 0 && std::isxdigit(static_cast<unsigned char>(text[i - 1])) != 0) {
        out.push_back(c);
        ++i;
        continue;
      }
      const std::size_t end = literal_end(text, i);
      out.append(text.substr(i, end - i));
      i = end;
    } else if (c == '/' && i + 1 < text.size() && text[i + 1] == '/') {
      const std::size_t end = std::min(text.find('\n', i), text.size());
      out.push_back(' ');
      i = end;
    } else if (c == '/' && i + 1 < text.size() && text[i + 1] == '*') {
      const std::size_t close = text.find("*/", i + 2);
      const std::size_t end = close == std::string_view::npos ? text.size() : close + 2;
      out.push_back(' ');
      for (std::size_t k = i; k < end; ++k) {
        if (text[k] == '\n') out.push_back('\n');
      }
      i = end;
    } else {
      out.push_back(c);
      ++i;
    }
  }
  return out;
}

// The quoted or bracketed name at `at`, or an error: a name given through a macro.
common::Result<std::string> name_at(std::string_view text, std::size_t at, std::string_view directive) {
  if (at < text.size() && (text[at] == '"' || text[at] == '<')) {
    const char close = text[at] == '"' ? '"' : '>';
    const std::size_t end = text.find_first_of(std::string{close, '\n'}, at + 1);
    if (end != std::string_view::npos && text[end] == close) return std::string(text.substr(at + 1, end - at - 1));
  }
  const std::size_t line_end = text.find('\n', at);
  return unsupported(std::string(directive) + " names its file through a macro: \"" +
                     std::string(text.substr(at, line_end == std::string_view::npos ? 40 : line_end - at)) + "\"");
}

bool word_at(std::string_view text, std::size_t at, std::string_view word) {
  if (text.substr(at, word.size()) != word) return false;
  const std::size_t after = at + word.size();
  return after >= text.size() || !(std::isalnum(static_cast<unsigned char>(text[after])) != 0 || text[after] == '_');
}

// What a regular file on disk holds, as the record needs it: its SHA-256 and the names it includes.
struct FileFacts {
  // other: a directory, or a file this process cannot read; special: a device, FIFO or socket,
  // whose content can change under one stamp
  enum class State { absent, file, other, special } state = State::absent;
  std::string digest_hex;
  std::size_t size = 0;
  std::shared_ptr<const common::Result<std::vector<std::string>>> names;
};

// The facts of files already read in this process, by path, each with the stat stamp it was read
// under (device, inode, size, mtime, ctime): a file changed since has another stamp and is read
// again. Rationale: CuPy compiles dozens of kernels at start-up, each with -I to the same headers;
// reading and hashing them once per process, not once per compile, keeps a hit cheap.
// Never destroyed: a compile on another thread may outlive static destruction at exit.
struct Remembered {
  std::string stamp;
  FileFacts facts;
};
std::mutex& memory_mutex() {
  static auto* mutex = new std::mutex();
  return *mutex;
}
std::unordered_map<std::string, Remembered>& memory() {
  static auto* known = new std::unordered_map<std::string, Remembered>();
  return *known;
}

std::string stamp_of(const struct stat& st) {
  return std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino) + ":" + std::to_string(st.st_size) + ":" +
         std::to_string(st.st_mtim.tv_sec) + "." + std::to_string(st.st_mtim.tv_nsec) + ":" +
         std::to_string(st.st_ctim.tv_sec) + "." + std::to_string(st.st_ctim.tv_nsec);
}

// Whether the file's last change lies more than two seconds back.
bool settled(const struct stat& st) {
  timespec now{};
  ::clock_gettime(CLOCK_REALTIME, &now);
  return now.tv_sec - st.st_ctim.tv_sec > 2;
}

FileFacts facts_of(const std::string& path) {
  FileFacts facts;
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return facts;
  facts.state = S_ISREG(st.st_mode) || S_ISDIR(st.st_mode) ? FileFacts::State::other : FileFacts::State::special;
  if (!S_ISREG(st.st_mode)) return facts;
  const std::string stamp = stamp_of(st);
  {
    std::lock_guard lock(memory_mutex());
    if (auto it = memory().find(path); it != memory().end() && it->second.stamp == stamp) return it->second.facts;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return facts;  // there, but unreadable: NVRTC fails on it, and so it is keyed as "other"
  const std::string content((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  struct stat after {};
  facts.state = FileFacts::State::file;
  facts.digest_hex = proto::to_hex(proto::sha256(proto::as_bytes(content)));
  facts.size = content.size();
  facts.names = std::make_shared<const common::Result<std::vector<std::string>>>(included_names(content));
  // Remembered only when the file did not change while it was read, and its last change is old
  // enough that a second change could not share its timestamps (a file system's clock may tick in
  // milliseconds; ccache's direct mode refuses recently changed files for the same reason).
  if (::stat(path.c_str(), &after) == 0 && stamp_of(after) == stamp && settled(after)) {
    std::lock_guard lock(memory_mutex());
    memory()[path] = Remembered{stamp, facts};
  }
  return facts;
}

class Scanner {
 public:
  explicit Scanner(const IncludeScanInput& input) : m_input(input) {}

  common::Result<IncludeRecord> run() {
    // What NVRTC stats before it reads anything (docs/cache-key.md).
    JITCACHE_TRY(visit(m_input.name, false));
    JITCACHE_TRY(visit("__nv_nvrtc_builtin_header.h", false));
    const std::string main_directory = directory_of(m_input.name);
    for (const std::string& file : m_input.pre_includes) JITCACHE_TRY(follow(file, main_directory));
    JITCACHE_TRY(scan_text(m_input.source, main_directory));
    for (const auto& [name, content] : m_input.headers) JITCACHE_TRY(scan_text(content, directory_of(name)));
    return m_record;
  }

 private:
  common::Result<void> scan_text(std::string_view raw, const std::string& directory) {
    auto names = included_names(raw);
    JITCACHE_TRY(names);
    for (const std::string& name : *names) JITCACHE_TRY(follow(name, directory));
    return {};
  }

  // Every place `name` may be found from a file in `directory`.
  common::Result<void> follow(const std::string& name, const std::string& directory) {
    if (!name.empty() && name.front() == '/') return visit_named(name);
    if (!directory.empty()) JITCACHE_TRY(visit_named(joined(directory, name)));
    JITCACHE_TRY(visit_named(name));
    for (const std::string& path : m_input.include_paths) JITCACHE_TRY(visit_named(joined(path, name)));
    return {};
  }

  // One place an include may be found. NVRTC 13.0 (EDG's include suffixes) looks for a name whose
  // last part has no suffix (`<value>`, `<cuda/std/type_traits>`) also as the name with ".stdh",
  // right after the name itself, in each place it searches (strace -e stat; tests/integration/
  // test_transparent_nvrtc_directive_forms.cpp): so a NAME.stdh there can shadow a later NAME.
  common::Result<void> visit_named(const std::string& path) {
    JITCACHE_TRY(visit(path, true));
    const std::size_t slash = path.rfind('/');
    const std::size_t last = slash == std::string::npos ? 0 : slash + 1;
    if (last < path.size() && path.find('.', last) == std::string::npos) JITCACHE_TRY(visit(path + ".stdh", true));
    return {};
  }

  common::Result<void> visit(const std::string& path, bool scan) {
    if (!m_seen.insert(path).second) return {};
    ++m_record.probes;
    const FileFacts found = facts_of(path);
    if (found.state == FileFacts::State::special) {
      return unsupported(path + ", where the compile may look for a header, is a device, FIFO or socket");
    }
    m_record.text += path;
    m_record.text.push_back('\0');
    switch (found.state) {
      case FileFacts::State::absent: m_record.text += "absent"; break;
      case FileFacts::State::other: m_record.text += "other"; break;
      case FileFacts::State::file: m_record.text += "file " + found.digest_hex; break;
      case FileFacts::State::special: break;
    }
    m_record.text.push_back('\n');
    if (found.state != FileFacts::State::file) return {};
    ++m_record.files;
    m_bytes += found.size;
    if (m_record.files > k_max_files || m_bytes > k_max_bytes) {
      return unsupported("the compile may read more than " + std::to_string(k_max_files) + " files or " +
                         std::to_string(k_max_bytes >> 20) + " MiB from disk");
    }
    if (!scan) return {};
    const common::Result<std::vector<std::string>>& names = *found.names;
    if (!names) return names.error();
    const std::string directory = directory_of(path);
    for (const std::string& name : *names) JITCACHE_TRY(follow(name, directory));
    return {};
  }

  const IncludeScanInput& m_input;
  IncludeRecord m_record;
  std::set<std::string> m_seen;
  std::size_t m_bytes = 0;
};

}  // namespace

namespace {

// The names of `text`'s directives and __has_include, appended to `names`.
common::Result<void> add_included_names(const std::string& text, std::vector<std::string>& names) {
  std::size_t line = 0;
  while (line < text.size()) {
    const std::size_t end = std::min(text.find('\n', line), text.size());
    std::size_t at = skip_blanks(text, line);
    // `%:` is the digraph of `#`, which NVRTC 13.0 takes as one.
    const std::size_t hash = at < end && text[at] == '#' ? 1 : (text.compare(at, 2, "%:") == 0 ? 2 : 0);
    if (at < end && hash != 0) {
      at = skip_blanks(text, at + hash);
      for (std::string_view directive : {"include_next", "include", "import"}) {
        if (!word_at(text, at, directive)) continue;
        auto name = name_at(text, skip_blanks(text, at + directive.size()), "#" + std::string(directive));
        JITCACHE_TRY(name);
        names.push_back(std::move(*name));
        break;
      }
    }
    line = end + 1;
  }
  // __has_include anywhere (in #if, #elif, or a macro's body).
  for (std::size_t at = text.find("__has_include"); at != std::string::npos; at = text.find("__has_include", at + 1)) {
    std::size_t after = at + std::string_view("__has_include").size();
    if (text.compare(after, 5, "_next") == 0) after += 5;
    if (after < text.size() && (std::isalnum(static_cast<unsigned char>(text[after])) != 0 || text[after] == '_')) {
      continue;  // another identifier that begins the same way
    }
    after = skip_blanks(text, after);
    if (after >= text.size() || text[after] != '(') {
      // `#ifdef __has_include`, `defined(__has_include)`: no file is named.
      continue;
    }
    auto name = name_at(text, skip_blanks(text, after + 1), "__has_include");
    JITCACHE_TRY(name);
    names.push_back(std::move(*name));
  }
  return {};
}

}  // namespace

common::Result<std::vector<std::string>> included_names(std::string_view raw) {
  const std::string text = spliced(raw);
  std::vector<std::string> names;
  // The text as written (a directive in a comment counts too: a superset), then the text as NVRTC
  // reads it, comments made blanks; each name once, where it was first found.
  JITCACHE_TRY(add_included_names(text, names));
  JITCACHE_TRY(add_included_names(decommented(text), names));
  std::vector<std::string> unique;
  std::set<std::string> seen;
  for (std::string& name : names) {
    if (seen.insert(name).second) unique.push_back(std::move(name));
  }
  return unique;
}

common::Result<IncludeRecord> scan_includes(const IncludeScanInput& input) { return Scanner(input).run(); }

}  // namespace jitcache::client::nvrtc
