#include <client/src/nvrtc/include_scan.hpp>

#include <client/src/nvrtc/has_include_forwarders.hpp>
#include <client/src/nvrtc/include_directives.hpp>
#include <client/src/nvrtc/macro_named_includes.hpp>
#include <client/src/nvrtc/nvrtc_predefined_macros.hpp>
#include <client/src/nvrtc/scan_memo.hpp>
#include <client/src/nvrtc/scan_recall.hpp>

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <unordered_map>
#include <unordered_set>

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

// What a regular file on disk holds, as the record needs it: its SHA-256 and the names it includes.
struct FileFacts {
  // other: a directory, or a file this process cannot read; special: a device, FIFO or socket,
  // whose content can change under one stamp
  // too_large: more bytes than a whole compile may read (k_max_bytes), left unread
  enum class State { absent, file, other, special, too_large } state = State::absent;
  std::string digest_hex;
  std::size_t size = 0;
  std::shared_ptr<const common::Result<IncludeDirectives>> directives;
  ProbeCheck check;     // what a recalled scan compares (scan_recall.hpp)
  bool settled = true;  // false: read within two seconds of its last change, a stamp that may name two contents
};

// The facts of files already read in this process, by path, each with the stat stamp it was read
// under (device, inode, size, mtime, ctime): a file changed since has another stamp and is read
// again. Rationale: CuPy compiles dozens of kernels at start-up, each with -I to the same headers;
// reading and hashing them once per process, not once per compile, keeps a hit cheap.
// Never destroyed: a compile on another thread may outlive static destruction at exit.
struct Remembered {
  FileStamp stamp;
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

// Whether the file's last change lies more than two seconds back.
bool settled(const struct stat& st) {
  timespec now{};
  ::clock_gettime(CLOCK_REALTIME, &now);
  return now.tv_sec - st.st_ctim.tv_sec > 2;
}

// The whole file, read with as few calls as its size allows (an ifstream read through
// istreambuf_iterator, one character at a time, was a third of a first scan's time).
std::optional<std::string> content_of(const std::string& path, const struct stat& st) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  // One byte more than the stat said, so that the read that finds the end needs no reallocation.
  std::string content(static_cast<std::size_t>(st.st_size) + 1, '\0');
  std::size_t have = 0;
  for (;;) {
    if (have == content.size()) content.resize(content.size() * 2);  // it grew since the stat
    const ssize_t got = ::read(fd, content.data() + have, content.size() - have);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) {
      ::close(fd);
      if (got < 0) return std::nullopt;
      content.resize(have);
      return content;
    }
    have += static_cast<std::size_t>(got);
  }
}

FileFacts facts_of(const std::string& path) {
  FileFacts facts;
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return facts;
  facts.state = S_ISREG(st.st_mode) || S_ISDIR(st.st_mode) ? FileFacts::State::other : FileFacts::State::special;
  facts.check = probe_check_of(&st);
  if (!S_ISREG(st.st_mode)) return facts;
  const FileStamp stamp = stamp_of(st);
  {
    std::lock_guard lock(memory_mutex());
    if (auto it = memory().find(path); it != memory().end() && it->second.stamp == stamp) return it->second.facts;
  }
  facts.settled = settled(st);
  if (std::optional<MemoizedFile> memoized = memo_find(path, stamp)) {
    facts.state = FileFacts::State::file;
    facts.digest_hex = std::move(memoized->digest_hex);
    facts.size = memoized->size;
    facts.directives = std::make_shared<const common::Result<IncludeDirectives>>(std::move(memoized->directives));
    std::lock_guard lock(memory_mutex());
    memory()[path] = Remembered{stamp, facts};
    return facts;
  }
  // Rationale: a candidate the compile may never read (a `.stdh` variant, a choice of a macro, an
  // include under `#if 0`) can be a huge or sparse file; reading it whole to refuse it afterwards
  // cost its size in memory and time, enough to have the program killed.
  if (static_cast<std::uint64_t>(st.st_size) > k_max_bytes) {
    facts.state = FileFacts::State::too_large;
    return facts;
  }
  const std::optional<std::string> read = content_of(path, st);
  if (!read) return facts;  // there, but unreadable: NVRTC fails on it, and so it is keyed as "other"
  facts.settled = false;    // until the stat after the read says otherwise
  const std::string& content = *read;
  struct stat after {};
  facts.state = FileFacts::State::file;
  facts.digest_hex = proto::to_hex(proto::sha256(proto::as_bytes(content)));
  facts.size = content.size();
  facts.directives = std::make_shared<const common::Result<IncludeDirectives>>(parse_include_directives(content));
  // Remembered only when the file did not change while it was read, and its last change is old
  // enough that a second change could not share its timestamps (a file system's clock may tick in
  // milliseconds; ccache's direct mode refuses recently changed files for the same reason).
  if (::stat(path.c_str(), &after) == 0 && stamp_of(after) == stamp && settled(after)) {
    facts.settled = true;
    {
      std::lock_guard lock(memory_mutex());
      memory()[path] = Remembered{stamp, facts};
    }
    if (*facts.directives) memo_store(path, stamp, MemoizedFile{facts.digest_hex, facts.size, **facts.directives});
  }
  return facts;
}

class Scanner {
 public:
  Scanner(const IncludeScanInput& input, const std::vector<std::string>& defines)
      : m_input(input), m_defines(defines) {}

  // After run(): whether every file read had settled, and what a recalled scan checks.
  bool all_settled() const { return m_all_settled; }
  std::vector<ProbeCheck> checks() const { return m_checks; }
  const std::vector<bool>& in_main_directory() const { return m_in_main_directory; }

  common::Result<IncludeRecord> run() {
    // What NVRTC stats before it reads anything (docs/cache-key.md).
    JITCACHE_TRY(visit(m_input.name, false, true));
    JITCACHE_TRY(visit("__nv_nvrtc_builtin_header.h", false));
    const std::string main_directory = directory_of(m_input.name);
    for (const std::string& file : m_input.pre_includes) JITCACHE_TRY(follow(file, main_directory, false, true));
    JITCACHE_TRY(scan_text(m_input.source, main_directory, "the source"));
    for (const auto& [name, content] : m_input.headers) {
      JITCACHE_TRY(scan_text(content, directory_of(name), "the header \"" + name + "\" passed at create"));
    }
    if (!m_defines.empty()) {
      JITCACHE_TRY(scan_text(definitions_text(m_defines), main_directory, "the options' macro definitions (-D)"));
    }
    // Each round may find texts with more forwarders or more definitions, and so more names.
    for (std::size_t texts = 0, definitions = 0;;) {
      JITCACHE_TRY(follow_forwarded_probes());
      JITCACHE_TRY(follow_macro_named_includes());
      if (texts == m_scanned.size() && definitions == m_macros.definitions()) {
        if (m_unresolved) return *m_unresolved;
        return m_record;
      }
      texts = m_scanned.size();
      definitions = m_macros.definitions();
    }
  }

 private:
  // A text whose names were followed, kept for the probes its calls of forwarders make.
  struct Scanned {
    std::string directory;
    bool in_memory = false;  // the source or a header passed at create, not a file on disk
    std::shared_ptr<const common::Result<IncludeDirectives>> directives;
    std::string what;  // for a refusal's reason
  };

  common::Result<void> scan_text(std::string_view raw, const std::string& directory, const std::string& what) {
    return scan_directives(directory,
                           std::make_shared<const common::Result<IncludeDirectives>>(parse_include_directives(raw)),
                           what, true);
  }

  common::Result<void> scan_directives(const std::string& directory,
                                       std::shared_ptr<const common::Result<IncludeDirectives>> directives,
                                       const std::string& what, bool in_memory) {
    const common::Result<IncludeDirectives>& parsed = *directives;
    if (!parsed) return parsed.error();
    // Its output changes with the clock: a stored answer would give every later program the date
    // of the first compile (ccache's direct mode declines such a compile the same way).
    if (!parsed->time_macro.empty()) {
      return unsupported(what + ", which the compile may read, uses " + parsed->time_macro +
                         ": the output changes with the clock");
    }
    m_scanned.push_back(Scanned{directory, in_memory, directives, what});
    m_forwarders.add(*parsed);
    m_any_macro_include = m_any_macro_include || !parsed->macro_includes.empty();
    for (std::size_t i = 0; i < parsed->names.size(); ++i) {
      JITCACHE_TRY(follow(parsed->names[i], directory, parsed->bracketed[i], in_memory));
    }
    return {};
  }

  // The probes made through forwarding macros (client/src/nvrtc/has_include_forwarders.hpp), each
  // followed as a direct __has_include is: a forwarder's definition and its calls may lie in any
  // texts of the compile, and a file found may define or call more, so this goes round until a
  // round finds no new text and no new forwarder.
  common::Result<void> follow_forwarded_probes() {
    std::size_t& done = m_probed_texts;
    for (;;) {
      const bool learned = m_forwarders.settle();
      if (!learned && done == m_scanned.size()) return {};
      const std::size_t from = learned ? 0 : done;
      done = m_scanned.size();
      for (std::size_t i = from; i < done; ++i) {
        const Scanned scanned = m_scanned[i];  // a copy: following may add to m_scanned
        auto probed = m_forwarders.probes(**scanned.directives);
        JITCACHE_TRY(probed);
        for (const ForwardedProbe& probe : *probed) {
          JITCACHE_TRY(follow(probe.name, scanned.directory, probe.bracketed, scanned.in_memory));
          // Passed through a macro, `<DIR/x.h>` is expanded as an argument before __has_include
          // sees it (NVRTC 13.0 probes sub/x.h after `#define DIR sub`), unlike a direct
          // `__has_include(<DIR/x.h>)`: resolved as a macro-named include is, every round.
          if (probe.bracketed && m_bracketed_probes.insert(probe.name).second) note_probe_identifiers(probe.name);
          if (probe.in_definition && !probe.bracketed && m_probes_in_definitions.insert(probe.name).second) {
            m_names_in_definitions.push_back(probe.name);
          }
        }
      }
      // A probe in a #define's body is made where the macro is used, in any file of the compile
      // (follow() remembers the pairs already walked, so this costs lookups only).
      for (std::size_t i = 0; i < m_names_in_definitions.size(); ++i) {
        for (std::size_t text = 0; text < m_scanned.size(); ++text) {
          const Scanned from = m_scanned[text];  // a copy: following may add to m_scanned
          JITCACHE_TRY(follow(m_names_in_definitions[i], from.directory, false, from.in_memory));
        }
      }
    }
  }

  // Rationale: gathering every text's definitions costs a libcu++ scan more than the rest of a
  // warm scan (7.6 ms against 2.2 ms, tests/bench/bench_nvrtc_scan.cpp), and its probes
  // (`<cuda_fp16.h>`, `<nvtx3/nvtx3.hpp>`) name no macro; so the probes' identifiers are kept, and
  // the definitions gathered only once one of them may be a macro: a text defines it, NVRTC may
  // predefine it, or it is reserved (the expansion judges those).
  void note_probe_identifiers(std::string_view name) {
    m_macros_resolved_probes = k_never;
    for (std::size_t i = 0; i < name.size();) {
      const auto identifier_char = [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
      };
      if (!identifier_char(name[i])) {
        ++i;
        continue;
      }
      std::size_t end = i;
      while (end < name.size() && (identifier_char(name[end]) || name[end] == '.')) {
        if (name[end] == '.' && !(name[i] >= '0' && name[i] <= '9')) break;  // `.` continues a pp-number only
        ++end;
      }
      const std::string_view identifier = name.substr(i, end - i);
      i = end;
      if (identifier[0] >= '0' && identifier[0] <= '9') continue;
      const bool reserved = identifier.size() >= 2 && identifier[0] == '_' &&
                            (identifier[1] == '_' || (identifier[1] >= 'A' && identifier[1] <= 'Z'));
      if (reserved || nvrtc_may_predefine(identifier)) m_any_macro_include = true;
      if (m_probe_identifiers.emplace(identifier).second) m_probe_checked_texts = 0;
    }
  }

  // Whether a text defines one of the probes' identifiers (then m_any_macro_include).
  void find_probe_macros() {
    for (; m_probe_checked_texts < m_scanned.size() && !m_any_macro_include; ++m_probe_checked_texts) {
      const IncludeDirectives& text = **m_scanned[m_probe_checked_texts].directives;
      for (const ObjectMacro& macro : text.objects) {
        m_any_macro_include = m_any_macro_include || m_probe_identifiers.count(macro.name) != 0;
      }
      for (const std::string& name : text.function_like) {
        m_any_macro_include = m_any_macro_include || m_probe_identifiers.count(name) != 0;
      }
    }
  }

  // The includes named through object-like macros, each followed for every file name a choice of
  // the macros' definitions gives (client/src/nvrtc/macro_named_includes.hpp): the definitions
  // known so far, so run() comes back here while texts or definitions are added.
  common::Result<void> follow_macro_named_includes() {
    // Rationale: most compiles have no such include (libcu++ alone has none); the definitions of
    // every text are gathered only once one is met, so those scans pay nothing for them.
    // An include that cannot be resolved yet may be once a text found later defines its macro: it
    // is refused only when a round finds nothing new (run()).
    m_unresolved.reset();
    if (!m_any_macro_include) find_probe_macros();
    if (!m_any_macro_include) return {};
    for (; m_macro_texts < m_scanned.size(); ++m_macro_texts) m_macros.add(**m_scanned[m_macro_texts].directives);
    if (m_macros_resolved_probes != m_macros.definitions()) {
      m_macros_resolved_probes = m_macros.definitions();
      const std::vector<std::string> probes(m_bracketed_probes.begin(), m_bracketed_probes.end());
      for (const std::string& probe : probes) {
        auto files = m_macros.resolve("<" + probe + ">");
        if (!files) {
          if (!m_unresolved) {
            m_unresolved = unsupported("a probe through a macro of <" + probe + ">: " + files.error().message);
          }
          m_macros_resolved_probes = k_never;  // judged again next round
          continue;
        }
        for (const MacroNamedFile& file : *files) JITCACHE_TRY(follow(file.name, {}, true, false));
      }
    }
    const std::size_t known = m_scanned.size();  // texts found now are resolved in the next round
    m_resolved_under.resize(known, k_never);
    for (std::size_t i = 0; i < known; ++i) {
      // Followed already under these very definitions: the same names again.
      if (m_resolved_under[i] == m_macros.definitions()) continue;
      m_resolved_under[i] = m_macros.definitions();
      const Scanned scanned = m_scanned[i];  // a copy: following may add to m_scanned
      for (const std::string& written : (*scanned.directives)->macro_includes) {
        auto files = m_macros.resolve(written);
        if (!files) {
          if (!m_unresolved) m_unresolved = unsupported("in " + scanned.what + ", " + files.error().message);
          m_resolved_under[i] = k_never;  // judged again next round, so the refusal stands until resolved
          continue;
        }
        for (const MacroNamedFile& file : *files) {
          JITCACHE_TRY(follow(file.name, scanned.directory, file.bracketed, scanned.in_memory));
        }
      }
    }
    return {};
  }

  // Every place `name` may be found from a text in `directory`. NVRTC 13.0 looks for a quoted name
  // in the including file's directory, then in each include path; for one in the source (and, as
  // a superset, in a header passed at create) in the working directory too; for a bracketed name in
  // the include paths only (strace -e stat,openat, docs/cache-key.md "Files read from disk").
  // Probing more than it does would let whoever can write such a place (/tmp as the working
  // directory) plant a FIFO there and turn the cache off for compiles that never look there.
  common::Result<void> follow(const std::string& name, const std::string& directory, bool bracketed, bool in_memory) {
    // Rationale: the headers of one directory include the same names over and over; each pair's
    // candidates are the same paths, already visited.
    std::string pair = bracketed ? std::string() : directory;
    pair.push_back(bracketed ? '<' : in_memory ? 'm' : '"');
    pair += name;
    if (!m_followed.insert(std::move(pair)).second) return {};
    // A name whose last part has no suffix is looked for as NAME.stdh too, in each place.
    const std::size_t last_part = name.rfind('/') + 1;  // 0 when there is no slash
    const bool suffixless = last_part < name.size() && name.find('.', last_part) == std::string::npos;
    if (!name.empty() && name.front() == '/') return visit_named(name, suffixless);
    if (!bracketed && !directory.empty()) {
      JITCACHE_TRY(visit_named(joined(directory, name), suffixless, directory == m_main_directory));
    }
    if (!bracketed && (in_memory || directory.empty())) JITCACHE_TRY(visit_named(name, suffixless));
    for (const std::string& path : m_input.include_paths) JITCACHE_TRY(visit_named(joined(path, name), suffixless));
    return {};
  }

  // One place an include may be found. NVRTC 13.0 (EDG's include suffixes) looks for a name whose
  // last part has no suffix (`<value>`, `<cuda/std/type_traits>`) also as the name with ".stdh",
  // right after the name itself, in each place it searches (strace -e stat; tests/integration/
  // test_transparent_nvrtc_directive_forms.cpp): so a NAME.stdh there can shadow a later NAME.
  common::Result<void> visit_named(const std::string& path, bool suffixless, bool in_main_directory = false) {
    JITCACHE_TRY(visit(path, true, in_main_directory));
    if (suffixless) JITCACHE_TRY(visit(path + ".stdh", true, in_main_directory));
    return {};
  }

  // `in_main_directory`: the path is the program's name, or a name joined to its directory.
  common::Result<void> visit(const std::string& path, bool scan, bool in_main_directory = false) {
    if (!m_seen.insert(path).second) return {};
    ++m_record.probes;
    const FileFacts found = facts_of(path);
    if (found.state == FileFacts::State::special) {
      return unsupported(path + ", where the compile may look for a header, is a device, FIFO or socket");
    }
    if (found.state == FileFacts::State::too_large) {
      return unsupported(path + ", where the compile may look for a header, is larger than " +
                         std::to_string(k_max_bytes >> 20) + " MiB");
    }
    // The program's own file: compared by content when recalled (scan_recall.hpp), so its age is no matter.
    const bool own_file = path == m_input.name && found.state == FileFacts::State::file;
    m_checks.push_back(own_file ? ProbeCheck{ProbeCheck::Kind::content, {}} : found.check);
    m_in_main_directory.push_back(in_main_directory);
    m_all_settled = m_all_settled && (own_file || found.settled);
    m_record.text += path;
    m_record.text.push_back('\0');
    switch (found.state) {
      case FileFacts::State::absent: m_record.text += "absent"; break;
      case FileFacts::State::other: m_record.text += "other"; break;
      case FileFacts::State::file: m_record.text += "file " + found.digest_hex; break;
      case FileFacts::State::special:
      case FileFacts::State::too_large: break;
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
    return scan_directives(directory_of(path), found.directives, path, false);
  }

  const IncludeScanInput& m_input;
  const std::vector<std::string>& m_defines;
  IncludeRecord m_record;
  std::vector<ProbeCheck> m_checks;       // one per line of m_record.text
  std::vector<bool> m_in_main_directory;  // one per line: visit()'s in_main_directory
  const std::string m_main_directory = directory_of(m_input.name);
  bool m_all_settled = true;
  std::unordered_set<std::string> m_seen;
  std::unordered_set<std::string> m_followed;
  std::size_t m_bytes = 0;
  std::vector<Scanned> m_scanned;
  std::unordered_set<std::string> m_probes_in_definitions;  // of m_names_in_definitions, for uniqueness
  std::vector<std::string> m_names_in_definitions;
  HasIncludeForwarders m_forwarders;
  std::size_t m_probed_texts = 0;  // texts whose probes were followed under what the forwarders are now
  MacroNamedIncludes m_macros;
  std::size_t m_macro_texts = 0;              // texts whose definitions m_macros has
  std::optional<common::Error> m_unresolved;  // the first include the last round could not resolve
  static constexpr std::size_t k_never = static_cast<std::size_t>(-1);
  std::vector<std::size_t> m_resolved_under;  // per text: m_macros.definitions() when last followed
  bool m_any_macro_include = false;
  std::set<std::string> m_bracketed_probes;             // `<name>` arguments of forwarders' calls
  std::unordered_set<std::string> m_probe_identifiers;  // the identifiers in them
  std::size_t m_probe_checked_texts = 0;                // texts looked at for a definition of one of them
  std::size_t m_macros_resolved_probes = k_never;       // m_macros.definitions() when they were last resolved
};

}  // namespace

common::Result<std::vector<std::string>> included_names(std::string_view text) {
  auto directives = parse_include_directives(text);
  JITCACHE_TRY(directives);
  auto names = included_names_of(*directives);
  JITCACHE_TRY(names);
  MacroNamedIncludes macros;
  macros.add(*directives);
  for (const std::string& written : directives->macro_includes) {
    auto files = macros.resolve(written);
    JITCACHE_TRY(files);
    for (const MacroNamedFile& file : *files) names->push_back(file.name);
  }
  return names;
}

common::Result<IncludeRecord> scan_includes(const IncludeScanInput& input, const std::vector<std::string>& defines) {
  const ScanSignature signature = scan_signature(input, defines);
  if (auto recalled = recall_scan(signature)) return *recalled;
  Scanner scanner(input, defines);
  auto record = scanner.run();
  if (record && scanner.all_settled()) remember_scan(signature, *record, scanner.checks(), scanner.in_main_directory());
  return record;
}

void forget_scanned_files() {
  {
    std::lock_guard lock(memory_mutex());
    memory().clear();
  }
  forget_recalled_scans();
  scan_memo_reset();
}

}  // namespace jitcache::client::nvrtc
