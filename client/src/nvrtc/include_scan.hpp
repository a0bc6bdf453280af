// The include record of an NVRTC compile (docs/cache-key.md "NVRTC compiles: files read from
// disk"): what every path the compile may read held, in the order found, so that a key built from
// it names one state of the disk. NVRTC tells nothing of the files it read (nvrtc.h has no
// dependency output), so this scanner finds them itself, conservatively:
//
//   - every `#include`, `#include_next` and `__has_include(...)` in the source, in every header
//     passed at create and, recursively, in every file found, whatever `#if` surrounds it (a
//     directive in a comment counts too): a superset of what the preprocessor follows, in every
//     spelling NVRTC follows (comments as blanks, `%:` for `#`, form feed and vertical tab as
//     blanks: client/src/nvrtc/source_text.hpp)
//   - every call, on an `#if`, `#elif` or `#define` line of any of those texts, of a macro that
//     applies __has_include or __has_include_next to a parameter (libcu++'s `_CCCL_HAS_INCLUDE(_X)`,
//     at any depth, client/src/nvrtc/has_include_forwarders.hpp): a literal `<file>` or `"file"`
//     argument is probed as `__has_include(<file>)` is
//   - for each, every place NVRTC may look (observed with strace on NVRTC 13.0, docs/cache-key.md):
//     the including file's directory, the working directory, each -I/--include-path in order;
//     an absolute name only as itself; a name whose last part has no suffix also as NAME.stdh,
//     right after NAME, in each place. Each candidate is recorded as absent, a regular file with
//     its SHA-256, or something else; every regular file found is scanned in turn
//   - the paths NVRTC stats besides: the program's name and "__nv_nvrtc_builtin_header.h", relative
//     to the working directory, and every --pre-include
//
// A file's digest and what it says (includes, probes, macros that may forward a probe,
// client/src/nvrtc/include_directives.hpp) are remembered in the process under its stat stamp
// (device, inode, size, mtime, ctime), so that the many compiles of one program read and parse
// each header once and later ones only stat the paths; a file changed since has another stamp and
// is read again. The same facts are remembered across processes of the uid under the same key
// (client/src/nvrtc/scan_memo.hpp), so that a new process does not read and parse them either. Rationale for the stamp
// over a content digest as the key: the digest needs the read this saves; the stamp cannot be set back by a user
// (ctime) and a file is remembered only when its last change is over two seconds old, so two contents cannot share one
// stamp.
//
// An include whose file is named by an object-like macro (`#include MACRO`, Thrust's system
// headers) is followed for every file any definition of the macros in any text of the compile or
// the -D options may name (client/src/nvrtc/macro_named_includes.hpp says which expansions are
// refused). A probe so named (`__has_include(MACRO)`, a forwarder's `F(MACRO)`) cannot be followed:
// the compile is NVRTC's own (ErrorCode::unsupported, the message names the call), as it is when a
// candidate is a
// device, FIFO or socket (its content can change unseen) and beyond 20000 files or 512 MiB read.
// Thread safety: reads the file system; the remembered facts are behind a mutex.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <common/result.hpp>

namespace jitcache::client::nvrtc {

struct IncludeScanInput {
  std::string name;                                          // the program's name
  std::string source;                                        // the program's source
  std::vector<std::pair<std::string, std::string>> headers;  // (include name, content)
  std::vector<std::string> include_paths;
  std::vector<std::string> pre_includes;
};

struct IncludeRecord {
  std::string text;        // what the key covers: one "path\0state\n" per probed path
  std::size_t files = 0;   // regular files read
  std::size_t probes = 0;  // paths probed
};

// `defines`: each -D / --define-macro value, `NAME` or `NAME=body` (macro_named_includes.hpp).
common::Result<IncludeRecord> scan_includes(const IncludeScanInput& input,
                                            const std::vector<std::string>& defines = {});

// Forgets what this process remembered of files, and reads the scan memo's settings again: the
// next scan is a new process's (tests, bench_nvrtc_scan).
void forget_scanned_files();

// The file names a text includes or probes, in order, those through forwarders and macros it
// defines itself included (exposed for tests): ErrorCode::unsupported when one cannot be named.
common::Result<std::vector<std::string>> included_names(std::string_view text);

}  // namespace jitcache::client::nvrtc
