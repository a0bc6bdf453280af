// What the include scan (client/src/nvrtc/include_scan.hpp) learnt of a header from its bytes (its
// SHA-256, its size, its directives), remembered across processes of one uid, so that a new
// process (every CuPy start-up) neither reads nor parses the toolkit's CCCL again
// (docs/transparent.md "The scan memo").
//
// Where: $JITCACHE_NVRTC_SCAN_MEMO_DIR, else $XDG_CACHE_HOME/jitcache/nvrtc-scan, else
// $HOME/.cache/jitcache/nvrtc-scan, else the passwd entry's home in its place; an absolute path
// only. Off with JITCACHE_NVRTC_SCAN_MEMO=0. The directory is made 0700 and used only when, opened
// without following a link, it is a directory this uid owns that nobody else may read or write;
// every memo file is opened without following a link, read only when it is a regular file this
// uid owns with no permission for others, and written 0600 to a new file (O_EXCL) renamed into
// place, so two processes writing at once never mix their bytes. A directory or file unfit, a
// read-only or missing home: no memo, and the scan reads the files as without it.
//
// The key: the build of this code (its GNU build ID: scan_build_identity.hpp says why), the file's
// path and its stat stamp (device, inode, size, mtime and ctime in nanoseconds), and an entry is written only for a
// file whose last change is over two seconds old (include_scan.cpp says why: ccache's direct mode has the same guard).
// The entry repeats build, path and stamp and ends with an XXH3-128 of its bytes: a damaged, truncated or misplaced
// entry is ignored. Size: at most k_max_entries entries; beyond, the oldest are removed (scan_memo.cpp). Thread safety:
// safe from any thread.
#pragma once

#include <sys/stat.h>
#include <time.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <client/src/nvrtc/include_directives.hpp>
#include <proto/byte_io.hpp>

namespace jitcache::client::nvrtc {

// What names one state of a file without reading it.
struct FileStamp {
  dev_t device = 0;
  ino_t inode = 0;
  off_t size = 0;
  timespec modified{};
  timespec changed{};
  bool operator==(const FileStamp& other) const {
    return device == other.device && inode == other.inode && size == other.size &&
           modified.tv_sec == other.modified.tv_sec && modified.tv_nsec == other.modified.tv_nsec &&
           changed.tv_sec == other.changed.tv_sec && changed.tv_nsec == other.changed.tv_nsec;
  }
};

FileStamp stamp_of(const struct stat& st);

// A stamp as memo entries hold it.
void encode_stamp(const FileStamp& stamp, proto::ByteWriter& out);
std::optional<FileStamp> decode_stamp(proto::ByteReader& in);

struct MemoizedFile {
  std::string digest_hex;  // SHA-256 of its bytes
  std::size_t size = 0;
  IncludeDirectives directives;
};

// Rationale: CCCL is about 2,700 headers and an entry a kilobyte or two; 50,000 entries (some
// tens of MiB at most) hold a few toolkits and their changes, in a home where disk is counted.
inline constexpr std::size_t k_max_scan_memo_entries = 50000;

// The remembered facts of `path` in the state `stamp`; nullopt when none, or the memo is off or unfit.
std::optional<MemoizedFile> memo_find(const std::string& path, const FileStamp& stamp);
// Remembers them (the caller checked that the file is settled); failures are silent: no memo.
void memo_store(const std::string& path, const FileStamp& stamp, const MemoizedFile& file);

// An entry of another kind under the same rules (the scan's facts of a set of files: the key names
// their contents, e.g. by a digest of the include record): its payload, or nullopt.
std::optional<std::vector<std::uint8_t>> memo_find_keyed(std::string_view kind, std::string_view key);
void memo_store_keyed(std::string_view kind, std::string_view key, const std::vector<std::uint8_t>& payload);

// What a store does once per 1024 (and at a process's first), with another bound: the oldest
// entries beyond three quarters of `max_entries` removed when there are more (tests).
void scan_memo_keep_bounded(std::size_t max_entries);

// The directory the memo would use (empty: none), whether or not it is fit; for the docs and tests.
std::string scan_memo_directory_path();
// Why there is no memo in this process (empty when there is one).
std::string scan_memo_unavailable();
// Forgets the opened directory, so that the environment is read again (tests, the benchmark).
void scan_memo_reset();

}  // namespace jitcache::client::nvrtc
