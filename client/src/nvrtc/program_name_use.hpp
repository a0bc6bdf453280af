// Whether an NVRTC compile's output may hold its program's name, for the key relative to the
// program's directory (proto/nvrtc_program_directory.hpp, docs/cache-key.md "The program's name").
//
// NVRTC writes the name where the preprocessor expands `__FILE__` (or `__FILE_NAME__`) in the
// program's own text, `__BASE_FILE__` anywhere, and where `__builtin_FILE()` or
// `__builtin_source_location()` is evaluated for a call the program makes (a default argument:
// libcu++'s `source_location::current()`); NVRTC's builtin `assert` expands `__FILE__` (measured on
// NVRTC 13.0: the PTX of `assert(p)` holds the name's bytes; without it two names give the same
// PTX). So the output may hold the name, and this answers true, when
//
//   - the source names `__FILE__`, `__FILE_NAME__`, `__BASE_FILE__`, `__builtin_FILE`,
//     `__builtin_source_location`, `assert`, or a macro that any #define of any text of the compile
//     makes reach one of them or a `##` (pasting can make any name: `CAT(__FI, LE__)`), however many
//     macros deep (a header's CHECK(x) over assert)
//   - any text names `__BASE_FILE__`, or a macro reaching it, outside a #define
//   - the source names a function whose parameters evaluate `__builtin_FILE`,
//     `__builtin_source_location` or a macro reaching them (a default argument takes its caller's
//     file: libcu++'s `source_location::current()`), or a macro reaching such a function; or any
//     text evaluates one of those outside a default argument (a default member initializer, which
//     takes its constructor's caller's, even passed to a call: `f = tail(__builtin_FILE())`)
//   - a name expression (nvrtcAddNameExpression) names what the source may not
//   - the program's own file on disk, if the record holds it (the source may include it: its
//     `__FILE__` is the name), names what the source may not, or no longer has its recorded digest
//   - a text in memory (the source, a header passed at create, the -D options) defines a macro that
//     reaches any of them (a file on disk may use it: a superset is cheaper than following it)
//   - a file of the include record cannot be read, or no longer has its recorded digest
//
// Identifiers are read after comments (source_text.hpp), strings included: a name in a string
// makes the answer "may", never "cannot". Not seen: a header that pastes `__builtin_FILE` or
// `__BASE_FILE__` together outside a #define of its own (`CAT(__builtin_, FILE)()` as a default
// argument); counting every pasting macro used outside a #define would key every CCCL compile with
// its name, and no header of CUDA 13.0's include/ or CuPy's does it. The facts of the files on disk depend only on
// their contents, which the record names: they are remembered in the process and in the scan memo (scan_memo.hpp) under
// the XXH3-128 of the record's file digests, in order, so a new process reads no file for them, and programs whose
// records differ only in absent paths share them. Thread safety: safe from any thread.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace jitcache::client::nvrtc {

struct ProgramTexts {
  std::string_view name;  // the program's name: its own file, if any, is no text the compile reads
  std::string_view source;
  const std::vector<std::pair<std::string, std::string>>& headers;  // (include name, content)
  std::string_view option_definitions;                              // definitions_text of the -D options
  // nvrtcAddNameExpression's texts: NVRTC compiles each in the program, where `__BASE_FILE__` is
  // the name (measured on NVRTC 13.0: `f<sizeof(__BASE_FILE__)>` lowers with the name's length),
  // so each counts as the source does.
  const std::vector<std::string>& name_expressions;
};

// Why the output may hold the name (what names it, for the process report); nullopt: it cannot.
// `record`: the compile's include record (include_scan.hpp), whose regular files are read when
// their facts are not remembered.
std::optional<std::string> output_may_name_program(const ProgramTexts& texts, std::string_view record);

// Whether any text of the compile holds `text` as bytes: the source, a name expression, the -D
// definitions, a header passed at create (its name or content), or a regular file of `record` (the
// program's own file among them), read now; one that cannot be read or no longer has its recorded
// digest counts as holding it. For a log the program's directory was cut out of
// (proto/nvrtc_program_directory.hpp): a text that holds the directory could put it in the log.
bool compile_texts_hold(const ProgramTexts& texts, std::string_view record, std::string_view text);

// Forgets the facts this process remembered (tests).
void forget_program_name_facts();

}  // namespace jitcache::client::nvrtc
