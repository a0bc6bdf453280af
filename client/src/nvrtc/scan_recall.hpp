// A whole include scan remembered in the process (client/src/nvrtc/include_scan.hpp), so that the
// many compiles of one program that include the same headers (CuPy's kernels: the same preamble,
// other code) walk the include tree once: a later scan with the same signature (everything but the
// disk that decides which paths are probed: the program's name, the include paths, the
// pre-includes, the -D values, and what the source and each header passed at create say in their
// directives) only stats each path the remembered record names, and returns that record when every
// path is as it was: absent still absent, a directory still one, a regular file with the same stat
// stamp (device, inode, size, mtime, ctime) as when the scan read it. Given the same texts and the
// same states the scan probes the same paths in the same order, so the record is the one a new scan
// would make. A scan is remembered only when every file it read had settled (include_scan.cpp's
// two-second rule, as the per-file facts are), so a stamp names one content.
//
// Relative to the program's directory: CuPy names each program by a path in a fresh temporary
// directory (docs/cache-key.md "The program's name"), so a signature with the whole name would
// never repeat. Where every path of the record under the name's directory is the name itself or
// a name joined to that directory (the scan says which: a quoted include of the source, a
// pre-include), and no other path lies under it, the scan is remembered under a signature with the
// name's part after its directory instead of the name, and its record with those paths relative: a
// later program in another directory gets them joined to its own, as its scan would make them, and
// stats those.
// Rationale: in a warm scan of Thrust + CUB the stats were a third of the time and rebuilding the
// walk (macro candidates, hash sets, allocations) the rest (perf, docs/benchmarks.md "NVRTC compiles").
// Remembered across the processes of the uid too, in the scan memo (scan_memo.hpp: the same
// directory, rules and bound), under the XXH3-128 of the signature, which the entry repeats whole:
// a new process (every CuPy start) stats the paths of one entry instead of reading one entry per
// header. Bounded in the process: k_max_recalled_scans signatures; beyond, all are forgotten.
// Thread safety: safe from any thread.
#pragma once

#include <sys/stat.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <client/src/nvrtc/include_scan.hpp>
#include <client/src/nvrtc/scan_memo.hpp>

namespace jitcache::client::nvrtc {

inline constexpr std::size_t k_max_recalled_scans = 32;

// What one probed path was, as a later scan checks it with one stat.
struct ProbeCheck {
  // content: the program's own file (CuPy writes the source there just before the compile, a new
  // file each time): compared by its SHA-256, read again, which its record line holds.
  enum class Kind : std::uint8_t { absent, directory, regular, content } kind = Kind::absent;
  FileStamp stamp;  // regular files only
};

// `st`: the stat of the path, nullptr when it failed.
ProbeCheck probe_check_of(const struct stat* st);

struct ScanSignature {
  std::string whole;      // with the name; empty when a text's directives cannot be parsed (not remembered)
  std::string relative;   // with the name's part after its directory; empty where that cannot be
  std::string directory;  // the name's directory, for `relative`
};

ScanSignature scan_signature(const IncludeScanInput& input, const std::vector<std::string>& defines);

// The remembered record of `signature` when every path it names is as it was; nullopt otherwise.
std::optional<IncludeRecord> recall_scan(const ScanSignature& signature);

// `checks` and `in_main_directory` (the scan's word for each path): one per line of `record.text`.
void remember_scan(const ScanSignature& signature, const IncludeRecord& record, std::vector<ProbeCheck> checks,
                   const std::vector<bool>& in_main_directory);

void forget_recalled_scans();

// How many scans this process answered from a remembered one (tests, the benchmark).
std::size_t scans_recalled();

}  // namespace jitcache::client::nvrtc
