// The key of an NVRTC compile without its program's directory (docs/cache-key.md "The program's
// name"). CuPy names every program by a path in a fresh temporary directory (`/tmp/tmpab12cd/<md5>
// .cubin.cu`), removed before it compiles; the path is in the key twice, as the name and in the
// include record (NVRTC stats the name and looks for quoted includes beside it), so no two processes
// would share a result. NVRTC's output depends on the name only where it expands it (`__FILE__` in
// the source, `__BASE_FILE__`, `__builtin_FILE()`, the builtin `assert`: measured, docs/cache-key.md),
// names it in the log (a diagnostic's place) or writes debug information (-G, -lineinfo); the include
// record holds what was found beside it. So a compile the include scan finds naming none of these
// (client/src/nvrtc/program_name_use.hpp) is keyed a second way: the directory of its name replaced
// by a mark, in the name and in every recorded path under it, and the result stored there only when
// neither its log nor its outputs hold the name or the directory, or where only the log does, at
// the places a diagnostic names the program (result_without_directory); otherwise it is stored
// under the key with the name (nvrtc_key.hpp).
// Thread safety: pure functions.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include <proto/nvrtc_result.hpp>

namespace jitcache::proto {

// The directory part of a program's name ("/tmp/x" of "/tmp/x/k.cu"); empty when it has none, or
// when it is "/" (every absolute path would be under it).
std::string program_directory(std::string_view name);

// The include record (one "path\0state\n" per probed path) with the program's directory replaced:
// each path under it marked "D" and written relative to it, every other path marked "A" as it is (so
// no path of one kind can read as one of the other). nullopt when the name has no directory or the
// scan found a file under it other than the name itself (a header there names the directory in its
// own `__FILE__`), or the record is malformed.
std::optional<std::string> record_relative_to_program(std::string_view record, std::string_view name);

// Whether the result's log or any output holds the program's name or its directory, as bytes or as
// PTX writes a string (a list of decimal byte values): then it is no result of another name.
bool result_names_program(const NvrtcResult& result, std::string_view name);

// A result whose log names the program where a diagnostic gives its place ("<name>(3): warning",
// "at line 2 of <name>": NVRTC writes the name as it was given, whatever its length, measured on
// NVRTC 13.0, docs/cache-key.md), with the directory cut out of the log at those places and their
// offsets kept (NvrtcResult::log_directory_at), so that the program of another directory is
// answered the log NVRTC gives its own name (result_in_directory). nullopt unless the directory is
// plain (plain_program_directory), every place holds the whole name after a byte no path holds,
// the log holds the directory nowhere else, and no other output and no lowered name holds it. The
// caller also checks that no text of the compile holds the directory: a log that quotes one (an
// #error's text) would name it for another reason; and, since a text can spell the name from
// pieces (a spliced #line, joined string literals), that NVRTC gives the program under a name in
// another directory exactly this result with that directory put back (docs/cache-key.md).
std::optional<NvrtcResult> result_without_directory(const NvrtcResult& result, std::string_view name);

// `result` with `name`'s directory put back where it was cut out of the log; the result itself
// when nothing was cut; nullopt when the directory is not plain, an offset is past the log, or
// the log would pass 64 MiB.
std::optional<NvrtcResult> result_in_directory(const NvrtcResult& result, std::string_view name);

// Whether `name`'s directory is absolute and made only of letters, digits and "/._+-", as
// CuPy's temporary directories are: bytes a diagnostic writes as they are.
bool plain_program_directory(std::string_view name);

}  // namespace jitcache::proto
